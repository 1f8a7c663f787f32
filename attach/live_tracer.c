/*
 * Which thread holds a stopped target, and letting it go.
 *
 * Only the thread that seized a tracee can detach it.  For a target of
 * TRACER_THREAD_MIN threads or more a thread of coroscope's own, the
 * tracer, seizes them all (live_hold_threads()) and, to let them go,
 * detaches those that hold a signal (PTRACE_DETACH gives it back) and
 * exits: the kernel detaches the others as it exits, in one pass.  For
 * 2,000 threads that took 6-12 ms against 17-23 ms for one PTRACE_DETACH
 * each, every detach waking a thread that competes with the detaching
 * one for the CPUs.  The exit's detach drops a signal held at a
 * signal-delivery-stop, hence the explicit detaches for those.  For a
 * target of a few threads, starting and ending that thread costs more
 * than it saves (~0.4 ms of pause): the calling thread holds them and
 * detaches each.
 */
#include "attach/live.h"
#include "attach/live_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define GONE_WAIT_MS 1000      /* for the tracer thread to be gone */
#define TRACER_THREAD_MIN 64   /* threads for which one is worth it */

/*
 * The tracer thread, used for a target of TRACER_THREAD_MIN threads or
 * more.  Its life: hold the threads (tr->ret, tr->err say how that
 * went), report TR_HELD, wait for TR_RELEASE, let go, exit.
 */
enum tracer_phase { TR_STOPPING, TR_HELD, TR_RELEASE, TR_DONE };

struct tracer {
	int threaded;             /* else the caller's thread holds them */
	pthread_t thread;         /* the thread holding them */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	enum tracer_phase phase;
	int tid;                  /* the thread's, for the gone check */
	int ret;                  /* live_hold_threads()'s */
	struct cs_err err;
	struct live *lv;
	struct tracer *next;      /* in the list of tracers holding targets */
};

/* Tracers holding a target, for live_release_all_held() at exit. */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tracer *held;

/* Phases only move on: a release asked for at exit (from another
 * thread) while the tracer is still stopping is not undone by its
 * report. */
static void tracer_set_phase(struct tracer *tr, enum tracer_phase phase)
{
	pthread_mutex_lock(&tr->mu);
	if (phase > tr->phase)
		tr->phase = phase;
	pthread_cond_broadcast(&tr->cv);
	pthread_mutex_unlock(&tr->mu);
}

/* Wait until tr has reached phase (or gone past it), or until the
 * CLOCK_REALTIME time *until when there is one. */
static void tracer_wait_phase(struct tracer *tr, enum tracer_phase phase,
			      const struct timespec *until)
{
	pthread_mutex_lock(&tr->mu);
	/* Bounded by the other side, which always moves on: the tracer's
	 * stop_all() by its deadline, the caller by live_resume(); at
	 * exit, by *until. */
	while (tr->phase < phase) {
		if (!until)
			pthread_cond_wait(&tr->cv, &tr->mu);
		else if (pthread_cond_timedwait(&tr->cv, &tr->mu, until) ==
			 ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&tr->mu);
}

static void *tracer_main(void *arg)
{
	struct tracer *tr = arg;

	tr->tid = (int)syscall(SYS_gettid);
	tr->ret = live_hold_threads(tr->lv, &tr->err);
	tracer_set_phase(tr, TR_HELD);
	tracer_wait_phase(tr, TR_RELEASE, NULL);
	live_let_go(tr->lv, 0);
	tracer_set_phase(tr, TR_DONE);
	return NULL;
}

static void held_add(struct tracer *tr)
{
	pthread_mutex_lock(&held_mu);
	tr->next = held;
	held = tr;
	pthread_mutex_unlock(&held_mu);
}

static void held_remove(struct tracer *tr)
{
	struct tracer **p;

	pthread_mutex_lock(&held_mu);
	/* Bounded: one entry per memsrc stopped at once. */
	for (p = &held; *p; p = &(*p)->next)
		if (*p == tr) {
			*p = tr->next;
			break;
		}
	pthread_mutex_unlock(&held_mu);
}

/* A tracer thread for this many threads or more (test aid: always with
 * COROSCOPE_TEST_TRACER=thread).  Starting it and waiting for it costs
 * about half a millisecond more pause; detaching a thread costs ~10 us. */
static int use_tracer_thread(const struct memsrc *ms)
{
	const char *s = getenv("COROSCOPE_TEST_TRACER");

	return ms->nthreads >= TRACER_THREAD_MIN ||
	       (s && !strcmp(s, "thread"));
}

/* Start the tracer thread and wait until it holds every thread (or
 * hold them on the caller's thread when none can start).  0 or a
 * status. */
static int tracer_start_thread(struct tracer *tr, struct cs_err *err)
{
	pthread_t thread;
	int ret;

	pthread_mutex_init(&tr->mu, NULL);
	pthread_cond_init(&tr->cv, NULL);
	tr->phase = TR_STOPPING;
	cs_err_init(&tr->err);
	/* Created with the caller's signal mask: a signal the caller takes
	 * the guard sends on to the tracer, which must take it too. */
	ret = pthread_create(&thread, NULL, tracer_main, tr);
	if (ret) {
		/* No thread to spare: hold them here (detaching each is
		 * slower, but works). */
		pthread_cond_destroy(&tr->cv);
		pthread_mutex_destroy(&tr->mu);
		return live_hold_threads(tr->lv, err);
	}
	/* Under the lock live_release_all_held() reads them with. */
	pthread_mutex_lock(&held_mu);
	tr->thread = thread;
	tr->threaded = 1;
	pthread_mutex_unlock(&held_mu);
	tracer_wait_phase(tr, TR_HELD, NULL);
	if (tr->ret)
		*err = tr->err;
	return tr->ret;
}

/* Hold every thread of the target, on a thread of its own or not.  0 or
 * a status; either way tracer_release() lets them go. */
int live_tracer_start(struct memsrc *ms, struct live *lv,
		      struct cs_err *err)
{
	struct tracer *tr = xcalloc(1, sizeof(*tr));

	tr->lv = lv;
	tr->thread = pthread_self();  /* until a tracer thread holds them */
	lv->tracer = tr;
	held_add(tr);
	if (use_tracer_thread(ms))
		return tracer_start_thread(tr, err);
	return live_hold_threads(lv, err);
}

/* Wait (bounded) until thread tid of coroscope's is gone: its tracees
 * are detached by then.  Yield first (it takes microseconds), then sleep:
 * a tracer that stays a zombie (coroscope itself traced, `strace -f`)
 * must not have a CPU spun for the whole wait. */
static void wait_gone(int tid)
{
	const struct timespec nap = { 0, 100 * 1000 };
	double deadline = cs_now_ms() + GONE_WAIT_MS;
	int spins = 0;

	/* Bounded by the deadline. */
	while (syscall(SYS_tgkill, getpid(), tid, 0) == 0 &&
	       cs_now_ms() < deadline) {
		if (spins++ < 64)
			sched_yield();
		else
			nanosleep(&nap, NULL);
	}
}

/* Let the target go.  A tracer thread's exit detaches its tracees; wait
 * until it has: that happens before its tid is freed, and joining may
 * return before. */
void live_tracer_release(struct live *lv)
{
	struct tracer *tr = lv->tracer;

	if (!tr)
		return;
	if (tr->threaded) {
		tracer_set_phase(tr, TR_RELEASE);
		pthread_join(tr->thread, NULL);
		wait_gone(tr->tid);
		pthread_cond_destroy(&tr->cv);
		pthread_mutex_destroy(&tr->mu);
		live_guard_tracer_gone();
	} else {
		live_let_go(lv, 1);
	}
	held_remove(tr);
	free(tr);
	lv->tracer = NULL;
}

/*
 * At exit(), on whichever thread called it: let every held target go as
 * far as this thread can, freeing and joining nothing (another thread
 * may be in the middle of using them, and the process ends).  Only the
 * holding thread can detach: a tracer thread is asked to and waited for
 * (bounded); a target held by another thread is left to the kernel's
 * detach as coroscope ends.
 */
void live_release_all_held(void)
{
	struct timespec until;
	struct tracer *tr;
	int n = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += GONE_WAIT_MS / 1000;
	pthread_mutex_lock(&held_mu);
	/* Bounded: one entry per memsrc stopped at once, and 64. */
	for (tr = held; tr && n < 64; tr = tr->next, n++) {
		if (pthread_equal(pthread_self(), tr->thread)) {
			live_let_go(tr->lv, !tr->threaded);
		} else if (tr->threaded) {
			tracer_set_phase(tr, TR_RELEASE);
			tracer_wait_phase(tr, TR_DONE, &until);
		}
	}
	pthread_mutex_unlock(&held_mu);
}
