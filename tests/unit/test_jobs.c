/*
 * Unit test of common/jobs.c: a job runs fn(arg) once and its join
 * gives back what fn returned; jobs run at once when started at once; a
 * job started after another's join runs on the same worker (no new
 * thread); at most IDLE_MAX (4) workers stay, the others end; a job
 * takes no signal but SIGPIPE, and that only with keep_sigpipe and as
 * its starter has it; a SIGPIPE raised while blocked in a job is not
 * delivered by a later job that unblocks it; a job may start and join
 * one of its own; a job handed to an idle worker runs on another CPU
 * than its starter's; a worker made ready ahead takes the next job.
 */
#include "common/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/support/thread_count.h"
#include "tests/unit/check.h"
#include "common/banned.h"

static void *plus_one(void *p)
{
	int *v = p;

	++*v;
	return v;
}

static int inner_v;

/* Starts a job of its own from this worker and joins it: *p gets what
 * it returned. */
static void *nested(void *p)
{
	void **out = p;
	struct cs_job *j;

	if (cs_job_start(&j, plus_one, &inner_v, 0) == 0)
		*out = cs_job_join(j);
	return p;
}

/* Jobs that all wait until all have started: none could end otherwise. */
#define AT_ONCE 6
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int arrived;

static void *meet(void *p)
{
	struct timespec until;
	int all;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&gate_lock);
	arrived++;
	pthread_cond_broadcast(&gate_cond);
	while (arrived < AT_ONCE &&
	       pthread_cond_timedwait(&gate_cond, &gate_lock, &until) == 0)
		;
	all = arrived >= AT_ONCE;
	pthread_mutex_unlock(&gate_lock);
	return all ? p : NULL;
}

struct mask_seen {
	int blocks_int, blocks_pipe;
};

static void *see_mask(void *p)
{
	struct mask_seen *s = p;
	sigset_t mask;

	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	s->blocks_int = sigismember(&mask, SIGINT);
	s->blocks_pipe = sigismember(&mask, SIGPIPE);
	return s;
}

static void mask_of_job(int keep_sigpipe, int caller_blocks,
			struct mask_seen *s)
{
	sigset_t pipe, old;
	struct cs_job *j;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(caller_blocks ? SIG_BLOCK : SIG_UNBLOCK, &pipe, &old);
	memset(s, 0, sizeof(*s));
	CHECK(cs_job_start(&j, see_mask, s, keep_sigpipe) == 0, "started");
	CHECK(cs_job_join(j) == s, "joined");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A write to a pipe with no reader: EPIPE, and SIGPIPE raised. */
static void *write_to_closed(void *p)
{
	int *err = p, fds[2];

	*err = 0;
	if (pipe(fds) < 0)
		return NULL;
	close(fds[0]);
	if (write(fds[1], "x", 1) < 0)
		*err = errno;
	close(fds[1]);
	return err;
}

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static void sigpipe_not_carried(void)
{
	struct sigaction sa, old_sa;
	struct mask_seen s;
	sigset_t pipe, old;
	struct cs_job *j;
	int err = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigpipe;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, &old_sa);
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	/* The starter blocks it (as `run` does): the job's write gets
	 * EPIPE, the signal stays pending where it was raised... */
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	CHECK(cs_job_start(&j, write_to_closed, &err, 1) == 0, "started");
	cs_job_join(j);
	CHECK(err == EPIPE, "EPIPE with SIGPIPE blocked (errno %d)", err);
	/* ...and a later job on that worker, with SIGPIPE unblocked by its
	 * starter, is not handed it. */
	pthread_sigmask(SIG_UNBLOCK, &pipe, NULL);
	CHECK(cs_job_start(&j, see_mask, &s, 1) == 0, "started");
	cs_job_join(j);
	CHECK(!s.blocks_pipe, "the later job had SIGPIPE unblocked");
	CHECK(sigpipes == 0, "%d SIGPIPE delivered from an earlier job",
	      (int)sigpipes);
	/* With it unblocked, the job's own write raises it (the handler
	 * here; the default action ends the process, as a write made by the
	 * main thread would). */
	CHECK(cs_job_start(&j, write_to_closed, &err, 1) == 0, "started");
	cs_job_join(j);
	CHECK(sigpipes == 1, "%d SIGPIPE for a job's own write",
	      (int)sigpipes);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGPIPE, &old_sa, NULL);
}

/* Where a job ran, and whether it had every CPU its starter has. */
struct placed {
	int cpu, ran;
	cpu_set_t mask;
};

static void *where(void *p)
{
	struct placed *at = p;

	at->cpu = sched_getcpu();
	if (sched_getaffinity(0, sizeof(at->mask), &at->mask) != 0)
		CPU_ZERO(&at->mask);
	__atomic_store_n(&at->ran, 1, __ATOMIC_RELEASE);
	return p;
}

/* Busy until the job ran (up to 50 ms), as coroscope's starters are
 * (a starter that sleeps at once leaves its CPU to the job anyway). */
static void spin_until_ran(const struct placed *at)
{
	double until = cs_now_ms() + 50;

	while (!__atomic_load_n(&at->ran, __ATOMIC_ACQUIRE) &&
	       cs_now_ms() < until)
		;
}

/* Moves the worker running it to CPU *p, then gives it its whole set
 * back: it sleeps there, where the kernel tends to wake it next. */
static void *move_here(void *p)
{
	cpu_set_t one, all;

	if (sched_getaffinity(0, sizeof(all), &all) != 0)
		return p;
	CPU_ZERO(&one);
	CPU_SET(*(int *)p, &one);
	(void)sched_setaffinity(0, sizeof(one), &one);
	(void)sched_setaffinity(0, sizeof(all), &all);
	return p;
}

/* A job handed to an idle worker runs on another CPU than its starter's
 * (the kernel would often wake it on the starter's: it then waits behind
 * it, or takes its CPU), with its whole set again.  Each round first
 * moves the worker (the last idle, the next job's: LIFO) to the
 * starter's CPU; where the starter moved meanwhile, the round tells
 * nothing. */
#define PLACE_ROUNDS 200

static void placed_elsewhere(void)
{
	struct placed at;
	struct cs_job *j;
	cpu_set_t all;
	int i, before, after, same = 0, told = 0, narrow = 0;

	if (sched_getaffinity(0, sizeof(all), &all) != 0 ||
	    CPU_COUNT(&all) < 2) {
		printf("skip: placement needs two CPUs to run on\n");
		return;
	}
	for (i = 0; i < PLACE_ROUNDS; i++) {
		before = sched_getcpu();
		if (cs_job_start(&j, move_here, &before, 0) != 0)
			continue;
		cs_job_join(j);
		at.ran = 0;
		before = sched_getcpu();
		if (cs_job_start(&j, where, &at, 0) != 0)
			continue;
		spin_until_ran(&at);
		after = sched_getcpu();
		cs_job_join(j);
		narrow += !CPU_EQUAL(&at.mask, &all);
		if (before != after)
			continue;
		told++;
		same += at.cpu == before;
	}
	/* (a host that moves the starter in most rounds tells too little)
	 * The job looks where it runs after its worker took its whole set
	 * back, and the kernel may move it there in between: a round in 20
	 * may say so (seen: 1 in 200 on a clean clone's `make check`).
	 * Without the placement: 198 to 200 rounds in 200 here. */
	if (told < PLACE_ROUNDS / 10)
		printf("skip: the starter moved CPUs in %d of %d rounds\n",
		       PLACE_ROUNDS - told, PLACE_ROUNDS);
	else
		CHECK(same * 20 <= told, "%d of %d rounds ran the job on its "
		      "starter's CPU", same, told);
	CHECK(narrow == 0, "%d jobs ran without every CPU", narrow);
}

/* Jobs held until released, to keep every idle worker busy. */
static int hold_open;

static void *hold(void *p)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 10000 && !__atomic_load_n(&hold_open, __ATOMIC_ACQUIRE);
	     i++)
		nanosleep(&ms, NULL);
	return p;
}

/* cs_jobs_ready() with none idle: a worker that lists itself idle, and
 * the next job runs on it (no thread more); with one idle, nothing. */
static void ready_worker(void)
{
	struct cs_job *busy[4], *j;
	size_t idle, unjoined;
	int i, n, v = 0, k;

	for (i = 0; i < 4; i++)
		CHECK(cs_job_start(&busy[i], hold, NULL, 0) == 0, "held %d", i);
	cs_jobs_count(&idle, &unjoined);
	CHECK(idle == 0, "%zu idle with every worker held", idle);
	n = thread_count();
	CHECK(cs_jobs_ready() == 0, "a ready worker starts");
	/* Bounded: 2 s for it to run and list itself. */
	for (k = 0; k < 2000; k++) {
		struct timespec ms = { 0, 1000000 };

		cs_jobs_count(&idle, &unjoined);
		if (idle)
			break;
		nanosleep(&ms, NULL);
	}
	CHECK(idle == 1 && thread_count() == n + 1,
	      "%zu idle, %d threads (%d before)", idle, thread_count(), n);
	CHECK(cs_jobs_ready() == 0, "ready again");
	CHECK(thread_count() == n + 1, "a second ready worker where one is "
	      "idle (%d threads)", thread_count());
	CHECK(cs_job_start(&j, plus_one, &v, 0) == 0, "a job on it");
	cs_job_join(j);
	CHECK(v == 1 && thread_count() == n + 1,
	      "the job ran (%d) on the ready worker (%d threads)", v,
	      thread_count());
	__atomic_store_n(&hold_open, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 4; i++)
		cs_job_join(busy[i]);
	cs_jobs_count(&idle, &unjoined);
	CHECK(idle == 4 && unjoined == 0, "%zu idle, %zu unjoined after",
	      idle, unjoined);
}

int main(void)
{
	struct cs_job *jobs[AT_ONCE], *j;
	struct mask_seen s;
	size_t idle, unjoined;
	void *back;
	int v = 41, tags[AT_ONCE], i, one, n;

	CHECK(cs_job_start(&j, plus_one, &v, 0) == 0, "a job starts");
	/* (joined before v is read: CHECK's arguments are evaluated in
	 * no set order) */
	back = cs_job_join(j);
	CHECK(back == &v && v == 42, "ran fn(arg) once (%d)", v);
	cs_jobs_count(&idle, &unjoined);
	CHECK(unjoined == 0 && idle == 1, "%zu unjoined, %zu idle", unjoined,
	      idle);
	/* Threads with that one worker (and, under ThreadSanitizer, its
	 * own thread, started with the first). */
	one = thread_count();
	CHECK(one >= 2, "%d threads with a worker", one);
	/* Reused: many jobs one after another, one worker. */
	for (i = 0; i < 100; i++) {
		CHECK(cs_job_start(&j, plus_one, &v, 0) == 0, "job %d", i);
		cs_job_join(j);
	}
	CHECK(v == 142, "100 more ran (%d)", v);
	CHECK(thread_count() == one, "%d threads after 101 jobs in turn "
	      "(%d after the first)", thread_count(), one);
	cs_jobs_count(&idle, &unjoined);
	CHECK(idle == 1 && unjoined == 0, "%zu idle, %zu unjoined after "
	      "101 jobs in turn", idle, unjoined);
	/* A job that starts and joins one of its own: on another worker,
	 * this one being busy; both kept after. */
	back = NULL;
	CHECK(cs_job_start(&j, nested, &back, 0) == 0, "nested: started");
	cs_job_join(j);
	CHECK(back == &inner_v && inner_v == 1,
	      "the inner job ran once and was joined inside (%d)", inner_v);
	cs_jobs_count(&idle, &unjoined);
	CHECK(idle == 2 && unjoined == 0, "%zu idle, %zu unjoined after a "
	      "nested job", idle, unjoined);
	/* At once: each waits for all the others to have started. */
	for (i = 0; i < AT_ONCE; i++)
		CHECK(cs_job_start(&jobs[i], meet, &tags[i], 0) == 0,
		      "job %d of %d at once", i, AT_ONCE);
	cs_jobs_count(&idle, &unjoined);
	CHECK(unjoined == AT_ONCE, "%zu unjoined", unjoined);
	for (i = 0; i < AT_ONCE; i++)
		CHECK(cs_job_join(jobs[i]) == &tags[i],
		      "job %d ran with the others", i);
	cs_jobs_count(&idle, &unjoined);
	CHECK(unjoined == 0 && idle == 4, "%zu unjoined, %zu workers kept",
	      unjoined, idle);
	n = thread_count_settled(one + 3);
	CHECK(n == one + 3, "%d threads once the others ended (%d with one "
	      "worker)", n, one);
	/* Signals: none but SIGPIPE, and that as the starter has it. */
	mask_of_job(0, 0, &s);
	CHECK(s.blocks_int && s.blocks_pipe, "no keep: all blocked");
	mask_of_job(1, 0, &s);
	CHECK(s.blocks_int && !s.blocks_pipe, "keep, unblocked: unblocked");
	mask_of_job(1, 1, &s);
	CHECK(s.blocks_int && s.blocks_pipe, "keep, blocked: blocked");
	mask_of_job(0, 0, &s);
	CHECK(s.blocks_pipe, "blocked again on a reused worker");
	sigpipe_not_carried();
	placed_elsewhere();
	ready_worker();
	return CHECK_DONE("test_jobs");
}
