/*
 * Unit test of cs_thread_start() (common/util.c): the function runs
 * with its argument; it takes no signal (SIGPIPE only with
 * keep_sigpipe); and although it may be started on another CPU than
 * its creator's, it runs with the creator's whole set of CPUs, not the
 * one it was started on.
 */
#include "common/util.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

struct seen {
	int arg;
	cpu_set_t cpus;
	int cpus_ok;
	int blocks_int, blocks_pipe;
};

static void *record(void *p)
{
	struct seen *s = p;
	sigset_t mask;

	s->arg++;
	s->cpus_ok = sched_getaffinity(0, sizeof(s->cpus), &s->cpus) == 0;
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	s->blocks_int = sigismember(&mask, SIGINT);
	s->blocks_pipe = sigismember(&mask, SIGPIPE);
	return s;
}

static void run(int keep_sigpipe, const cpu_set_t *mine, const char *what)
{
	struct seen s;
	pthread_t t;
	void *back = NULL;

	memset(&s, 0, sizeof(s));
	s.arg = 41;
	CHECK(cs_thread_start(&t, record, &s, keep_sigpipe) == 0, "%s", what);
	CHECK(pthread_join(t, &back) == 0, "joined");
	CHECK(back == &s && s.arg == 42, "ran fn(arg) once");
	CHECK(s.cpus_ok, "its affinity read");
	CHECK(CPU_EQUAL(&s.cpus, mine), "the creator's CPUs, all of them");
	CHECK(s.blocks_int == 1, "SIGINT blocked in the thread");
	CHECK(s.blocks_pipe == !keep_sigpipe, "SIGPIPE as asked");
}

int main(void)
{
	cpu_set_t mine, one;
	sigset_t mask;
	int i;

	CHECK(sched_getaffinity(0, sizeof(mine), &mine) == 0, "own CPUs");
	/* Many starts: each may land on a different CPU. */
	for (i = 0; i < 50; i++)
		run(i & 1, &mine, "started");
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	CHECK(!sigismember(&mask, SIGINT), "the creator's mask restored");

	/* On one CPU there is nowhere else: started as before. */
	CPU_ZERO(&one);
	for (i = 0; i < CPU_SETSIZE && !CPU_ISSET(i, &mine); i++)
		;
	CHECK(i < CPU_SETSIZE, "a CPU allowed");
	CPU_SET(i, &one);
	if (sched_setaffinity(0, sizeof(one), &one) == 0) {
		run(0, &one, "started on one CPU");
		CHECK(sched_setaffinity(0, sizeof(mine), &mine) == 0,
		      "all CPUs again");
	}
	return CHECK_DONE("test_thread_start");
}
