#include "common/jobs.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Idle workers kept: more than a collection ever runs at once (the
 * JSON writer and a part, or the readers' second thread). */
#define IDLE_MAX 4

struct cs_job {
	void *(*fn)(void *);
	void *arg;
	void *ret;
	int keep_sigpipe;
	int sigpipe;              /* run with SIGPIPE unblocked */
	int done;
	/* Handed to an idle worker kept off its starter's CPU
	 * (cs_thread_elsewhere()): it takes its set back as it starts. */
	int placed;
};

struct worker {
	pthread_cond_t wake;
	struct cs_job *job;       /* to run; NULL while idle */
	pid_t tid;                /* its thread, once it runs */
	cpu_set_t all;            /* the CPUs it may run on, then */
};

/* One lock over the idle workers, the jobs' ends and the count. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ended = PTHREAD_COND_INITIALIZER;
static struct worker *idlers[IDLE_MAX];
static size_t nidle, nunjoined;

/* A SIGPIPE raised while the job ran with it blocked (the caller had it
 * so: `run` wants EPIPE) stays pending on this thread: dropped, lest a
 * later job that unblocks it take it. */
static void drop_pending_sigpipe(const sigset_t *pipe)
{
	const struct timespec now = { 0, 0 };
	sigset_t pending;

	if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE))
		(void)sigtimedwait(pipe, NULL, &now);
}

static void run_job(struct cs_job *j, const struct worker *w)
{
	sigset_t pipe;

	/* (where that fails the job runs on all the same, on the CPUs it
	 * was woken for) */
	if (j->placed)
		(void)cs_thread_everywhere(&w->all);
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (j->sigpipe)
		pthread_sigmask(SIG_UNBLOCK, &pipe, NULL);
	j->ret = j->fn(j->arg);
	if (j->sigpipe)
		pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	if (j->keep_sigpipe)
		drop_pending_sigpipe(&pipe);
}

/* A worker: its first job, then each one it is handed while idle, until
 * it finds the idle list full. */
static void *worker_main(void *p)
{
	struct worker *w = p;
	struct cs_job *j;
	int wanted = 1;

	pthread_mutex_lock(&lock);
	w->tid = gettid();
	/* (read once: placing a job narrows it, and the job gives it back) */
	if (sched_getaffinity(0, sizeof(w->all), &w->all) != 0)
		CPU_ZERO(&w->all);
	/* Started with no job (cs_jobs_ready()): idle from now, unless
	 * enough are. */
	if (!w->job) {
		wanted = nidle < IDLE_MAX;
		if (wanted)
			idlers[nidle++] = w;
	}
	while (wanted) {
		while (!w->job)
			pthread_cond_wait(&w->wake, &lock);
		j = w->job;
		pthread_mutex_unlock(&lock);
		run_job(j, w);
		pthread_mutex_lock(&lock);
		j->done = 1;
		w->job = NULL;
		pthread_cond_broadcast(&ended);
		if (nidle == IDLE_MAX)
			break;
		idlers[nidle++] = w;
	}
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&w->wake);
	free(w);
	return NULL;
}

int cs_jobs_ready(void)
{
	struct worker *w;
	pthread_t thread;
	size_t idle;
	int ret;

	pthread_mutex_lock(&lock);
	idle = nidle;
	pthread_mutex_unlock(&lock);
	if (idle)
		return 0;
	w = xcalloc(1, sizeof(*w));
	pthread_cond_init(&w->wake, NULL);
	/* No job: worker_main() lists it idle once it runs.  (Two calls
	 * before it does make two: one more than needed, which ends if
	 * the idle list is full.) */
	ret = cs_thread_start(&thread, worker_main, w, 0);
	if (ret) {
		pthread_cond_destroy(&w->wake);
		free(w);
		return ret;
	}
	pthread_detach(thread);
	return 0;
}

int cs_job_start(struct cs_job **job, void *(*fn)(void *), void *arg,
		 int keep_sigpipe)
{
	struct cs_job *j = xcalloc(1, sizeof(*j));
	struct worker *w;
	pthread_t thread;
	sigset_t mask;
	int ret;

	j->fn = fn;
	j->arg = arg;
	j->keep_sigpipe = keep_sigpipe;
	if (keep_sigpipe && pthread_sigmask(SIG_SETMASK, NULL, &mask) == 0)
		j->sigpipe = !sigismember(&mask, SIGPIPE);
	pthread_mutex_lock(&lock);
	if (nidle) {
		w = idlers[--nidle];
		/* (its tid is set: it listed itself, or ran a job first;
		 * placed under the lock, before another job can take it) */
		j->placed = cs_thread_elsewhere(w->tid, &w->all) == 0;
		w->job = j;
		nunjoined++;
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&lock);
		*job = j;
		return 0;
	}
	pthread_mutex_unlock(&lock);
	w = xcalloc(1, sizeof(*w));
	pthread_cond_init(&w->wake, NULL);
	w->job = j;
	/* (every signal blocked: run_job() unblocks SIGPIPE for a job) */
	ret = cs_thread_start(&thread, worker_main, w, 0);
	if (ret) {
		pthread_cond_destroy(&w->wake);
		free(w);
		free(j);
		return ret;
	}
	pthread_detach(thread);
	pthread_mutex_lock(&lock);
	nunjoined++;
	pthread_mutex_unlock(&lock);
	*job = j;
	return 0;
}

void *cs_job_join(struct cs_job *j)
{
	void *ret;

	pthread_mutex_lock(&lock);
	while (!j->done)
		pthread_cond_wait(&ended, &lock);
	nunjoined--;
	pthread_mutex_unlock(&lock);
	ret = j->ret;
	free(j);
	return ret;
}

void cs_jobs_count(size_t *idle, size_t *unjoined)
{
	pthread_mutex_lock(&lock);
	*idle = nidle;
	*unjoined = nunjoined;
	pthread_mutex_unlock(&lock);
}
