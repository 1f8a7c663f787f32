#include "common/util.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/banned.h"

double cs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *cs_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int cs_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int cs_str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int cs_cpus(void)
{
	static _Atomic int cpus;  /* 0: not counted yet */
	int n = atomic_load(&cpus);
	const char *env;
	char *end;
	long v;
	cpu_set_t set;

	if (n)
		return n;
	/* Test aid (the man page's ENVIRONMENT): a count to act on, so
	 * that tests take every path on any machine. */
	env = getenv("COROSCOPE_TEST_CPUS");
	if (env && *env) {
		v = strtol(env, &end, 10);
		n = *end == '\0' && v >= 1 && v <= 1024 ? (int)v : 0;
	}
	if (!n)
		n = sched_getaffinity(0, sizeof(set), &set) == 0 ?
		    CPU_COUNT(&set) : 1;
	if (n < 1)
		n = 1;
	atomic_store(&cpus, n);
	return n;
}

/*
 * Where a new thread starts.  Left to the kernel, Linux 6.x often queues
 * a new thread on its creator's CPU, behind the creator, even with the
 * other CPU idle: it then waits for the next tick (1-4 ms) before a
 * load balance moves it, which is most of what a parallel phase of a
 * 10k-task dump would save.  So it is started on the allowed CPUs but
 * the creator's, and given the creator's whole set back once it runs
 * (so that it can move if its CPU gets busy).
 */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	cpu_set_t all;
};

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;

	free(p);
	(void)sched_setaffinity(0, sizeof(s.all), &s.all);
	return s.fn(s.arg);
}

/* The CPUs of all but the one this thread runs on: 0, or -1 when there
 * is no other (one allowed CPU, or not known). */
static int others_than_here(const cpu_set_t *all, cpu_set_t *others)
{
	int cpu = sched_getcpu();

	*others = *all;
	if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, others))
		return -1;
	CPU_CLR(cpu, others);
	return CPU_COUNT(others) ? 0 : -1;
}

/* 0 with *attr set to start a thread elsewhere than on this CPU, -1 when
 * there is nowhere else (one allowed CPU, or not known). */
static int attr_elsewhere(pthread_attr_t *attr, const cpu_set_t *all)
{
	cpu_set_t others;

	if (others_than_here(all, &others) || pthread_attr_init(attr) != 0)
		return -1;
	if (pthread_attr_setaffinity_np(attr, sizeof(others), &others)) {
		pthread_attr_destroy(attr);
		return -1;
	}
	return 0;
}

int cs_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    int keep_sigpipe)
{
	struct thread_start *s = malloc(sizeof(*s));
	pthread_attr_t attr;
	sigset_t all, old;
	int ret, placed = -1;

	if (s) {
		s->fn = fn;
		s->arg = arg;
		if (sched_getaffinity(0, sizeof(s->all), &s->all) == 0)
			placed = attr_elsewhere(&attr, &s->all);
	}
	pthread_sigmask(SIG_SETMASK, NULL, &old);
	sigfillset(&all);
	if (keep_sigpipe && !sigismember(&old, SIGPIPE))
		sigdelset(&all, SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	if (placed == 0) {
		ret = pthread_create(thread, &attr, thread_trampoline, s);
		pthread_attr_destroy(&attr);
		if (ret == 0)
			s = NULL;  /* the thread's now */
		else
			ret = pthread_create(thread, NULL, fn, arg);
	} else {
		ret = pthread_create(thread, NULL, fn, arg);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(s);
	return ret;
}

int cs_thread_elsewhere(pid_t tid, const cpu_set_t *all)
{
	cpu_set_t others;

	if (others_than_here(all, &others))
		return -1;
	return sched_setaffinity(tid, sizeof(others), &others) ? -1 : 0;
}

int cs_thread_everywhere(const cpu_set_t *all)
{
	return sched_setaffinity(0, sizeof(*all), all) ? -1 : 0;
}
