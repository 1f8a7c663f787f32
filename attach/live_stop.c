/*
 * Stopping and resuming a live target's threads: seize and interrupt
 * every one (PTRACE_SEIZE, PTRACE_INTERRUPT), wait for their stops, read
 * their registers, and detach them again; on the thread that holds them,
 * which live_tracer.c chooses.
 */
#include "attach/live.h"
#include "attach/live_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/*
 * Test aid, read from the environment (documented in the man page's
 * ENVIRONMENT section as an unsupported test hook):
 *   COROSCOPE_TEST_HOLD_MS=N   live_stop() keeps the target stopped N more
 *                              milliseconds once every thread is stopped,
 *                              so that tests can kill the target or
 *                              coroscope while it is attached.
 */
#define HOLD_ENV "COROSCOPE_TEST_HOLD_MS"

#define STOP_ROUNDS 64         /* listings of /proc/PID/task in live_stop */
#define STOP_WAIT_MS 1000      /* for every thread to report its stop */
#define DETACH_WAIT_MS 100     /* for a late stop before detaching */

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

int live_tid_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The tids seized or left running so far, sorted: a round's lookups in
 * O(log n), not a scan of thousands of threads for each of thousands. */
static int *seized_sorted(const struct live *lv, size_t *n)
{
	int *v = xcalloc(lv->nth + lv->nleft + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < lv->nth; i++)
		v[i] = lv->th[i].tid;
	for (i = 0; i < lv->nleft; i++)
		v[lv->nth + i] = lv->left[i].tid;
	*n = lv->nth + lv->nleft;
	if (*n > 1)
		qsort(v, *n, sizeof(*v), live_tid_cmp);
	return v;
}

/*
 * Exits a tracer wait reaped.  When coroscope is also the real parent
 * (`coroscope run` dumping its command), that wait was the only report
 * of the exit: keep the status for live_reaped_status().
 */
#define MAX_REAPED 16
static struct { int pid, status; } reaped[MAX_REAPED];
static size_t nreaped;

static void note_exit(pid_t pid, int st)
{
	if (pid <= 0 || !(WIFEXITED(st) || WIFSIGNALED(st)))
		return;
	reaped[nreaped % MAX_REAPED].pid = pid;
	reaped[nreaped % MAX_REAPED].status = st;
	nreaped++;
}

int live_reaped_status(int pid, int *status)
{
	size_t i;

	for (i = 0; i < MAX_REAPED; i++) {
		if (reaped[i].pid == pid && pid > 0) {
			*status = reaped[i].status;
			reaped[i].pid = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * Wait for a seized thread's stop.  PTRACE_INTERRUPT produces a
 * PTRACE_EVENT_STOP (as does a group-stop); but a signal arriving first
 * is reported as a signal-delivery-stop instead.  That is a ptrace-stop
 * too, so the thread counts as stopped, and the signal is kept in th->sig
 * and delivered again by PTRACE_DETACH: the target never loses a signal
 * to coroscope.  (The pending interrupt is cancelled by the detach.)
 */
/*
 * Wait for a seized thread's stop until deadline (CLOCK_MONOTONIC ms).
 * Polled, not blocking: a thread in uninterruptible sleep (a hung NFS
 * read, a vfork parent) takes no PTRACE_INTERRUPT until it wakes, and
 * must not keep coroscope, and the threads already stopped, waiting.
 * On timeout the thread stays TH_SEIZED.
 */
/* Collect th's stop if it was reported: 1 when th is settled (stopped
 * or gone), 0 when nothing was reported yet. */
static int poll_stop(struct live_thread *th)
{
	int st, rounds;

	/* Bounded: EINTR and reports other than a stop or an exit retry. */
	for (rounds = 0; rounds < 16; rounds++) {
		pid_t r = waitpid(th->tid, &st, __WALL | WNOHANG);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			th->state = TH_GONE;  /* ECHILD: not our tracee now */
			return 1;
		}
		if (r == 0)
			return 0;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			note_exit(r, st);
			th->state = TH_GONE;
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		if ((st >> 16) == 0) {
			th->sig = WSTOPSIG(st);
			live_guard_set_sig(th->guard_slot, th->tid, th->sig);
		}
		/* Any other event cannot happen with options 0. */
		th->state = TH_STOPPED;
		return 1;
	}
	return 0;
}

static void wait_stop(struct live_thread *th, double deadline)
{
	const struct timespec pause = { 0, 500 * 1000 };

	while (!poll_stop(th) && cs_now_ms() < deadline)
		nanosleep(&pause, NULL);
}

/* Detach a stopped thread, giving back the signal it held. */
static void detach_thread(struct live_thread *th)
{
	int st;

	if (th->state == TH_STOPPED &&
	    ptrace(PTRACE_DETACH, th->tid, NULL, (void *)(long)th->sig) < 0)
		/* Killed while stopped: reap its exit report if it is ours. */
		if (waitpid(th->tid, &st, __WALL | WNOHANG) > 0)
			note_exit(th->tid, st);
}

static void drop_gone(struct live *lv)
{
	size_t i, j = 0;

	for (i = 0; i < lv->nth; i++) {
		if (lv->th[i].state == TH_GONE)
			live_guard_remove(lv->th[i].guard_slot, lv->th[i].tid);
		else
			lv->th[j++] = lv->th[i];
	}
	lv->nth = j;
}

/* Seize and interrupt one thread; 0 also when it vanished meanwhile. */
static int seize_thread(struct live *lv, int tid, struct cs_err *err)
{
	struct live_thread *th;
	char st;

	lv->th = xgrow(lv->th, &lv->ath, lv->nth + 1, sizeof(*lv->th));
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		if (errno == ESRCH)
			return 0;
		if (errno == EPERM) {
			/* Exiting threads refuse to be traced: not our
			 * problem.  Nor are threads that are gone. */
			st = procfs_state(lv->pid, tid);
			if (!st || procfs_state_dead(st))
				return 0;
			return live_fail_denied_thread(err, lv->pid, tid,
						       "attach to");
		}
		return cs_fail(err, CS_ERR_INTERNAL,
			       "cannot attach to thread %d of process %d: %s",
			       tid, lv->pid, strerror(errno));
	}
	th = &lv->th[lv->nth++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->guard_slot = live_guard_add(tid);
	th->state = TH_SEIZED;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		int st2;

		/* It died between the two calls; collect its exit. */
		if (waitpid(tid, &st2, __WALL | WNOHANG) > 0)
			note_exit(tid, st2);
		th->state = TH_GONE;
	}
	return 0;
}

static void read_fs_base(struct live_thread *th)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, th->tid, NULL, &regs) == 0) {
		th->fs_base = regs.fs_base;
		th->has_fs_base = 1;
		/* All of them, for native unwinding: same call, no cost. */
		_Static_assert(sizeof(regs) == CS_REGS_IMAGE_SIZE,
			       "user_regs_struct is the pr_reg layout");
		cs_regs_from_image(&th->regs, &regs);
	} else if (errno == ESRCH) {
		th->state = TH_GONE;  /* SIGKILLed while stopped */
	}
#else
	(void)th;
#endif
}

static void hold_for_tests(void)
{
	const char *s = getenv(HOLD_ENV);
	struct timespec ts;
	char *end;
	long ms;

	if (!s || !*s)
		return;
	errno = 0;
	ms = strtol(s, &end, 10);
	if (errno || *end || ms <= 0)
		return;
	if (ms > 600000)
		ms = 600000;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Re-read the mappings; on failure the old list stays. */
static int refresh_maps(struct memsrc *ms, struct cs_err *err)
{
	struct cs_mapping *old = ms->maps;
	size_t nold = ms->nmaps;
	int ret;

	ms->maps = NULL;
	ms->nmaps = 0;
	ret = live_read_maps(ms, err);
	if (ret) {
		ms->maps = old;
		ms->nmaps = nold;
		return ret;
	}
	cs_mappings_free(old, nold);
	return 0;
}

/*
 * Wait for every seized thread's stop, in the order the stops come: each
 * pass over the threads collects every stop reported so far (and reads
 * that thread's registers while the others are still stopping), and
 * only a pass that found none sleeps.  On timeout the late threads stay
 * TH_SEIZED.
 */
static void wait_all(struct live *lv, double deadline)
{
	const struct timespec pause = { 0, 200 * 1000 };
	size_t i, left;

	/* Bounded by the deadline: every pass that settles nothing sleeps. */
	for (;;) {
		size_t settled = 0;

		left = 0;
		for (i = 0; i < lv->nth; i++) {
			struct live_thread *th = &lv->th[i];

			if (th->state != TH_SEIZED)
				continue;
			if (poll_stop(th)) {
				settled++;
				if (th->state == TH_STOPPED)
					read_fs_base(th);
			} else {
				left++;
			}
		}
		if (!left || (!settled && cs_now_ms() >= deadline))
			return;
		if (!settled)
			nanosleep(&pause, NULL);
	}
}

/*
 * One round of stopping: seize every listed thread not yet seized, wait
 * for all to stop.  *added says how many were new.  0 or a status.
 */
static int stop_round(struct live *lv, double deadline, size_t *added,
		      struct cs_err *err)
{
	int *tids, *seized;
	size_t ntids, nseized, i, n;
	int ret = 0;

	*added = 0;
	if (live_list_tasks(lv->pid, &tids, &ntids) < 0)
		return (int)live_exited(err, lv->pid);
	seized = seized_sorted(lv, &nseized);
	for (i = 0; i < ntids && !ret; i++) {
		if (bsearch(&tids[i], seized, nseized, sizeof(*seized),
			    live_tid_cmp) ||
		    live_left_keep(lv, tids[i]))
			continue;
		n = lv->nth;
		ret = seize_thread(lv, tids[i], err);
		*added += lv->nth - n;
	}
	free(tids);
	free(seized);
	if (ret)
		return ret;
	wait_all(lv, deadline);
	for (i = 0; i < lv->nth; i++)
		if (lv->th[i].state == TH_SEIZED)
			return cs_fail(err, CS_ERR_NOT_STOPPED,
				       "thread %d of process %d did not stop "
				       "within %d ms (%s); try --no-block",
				       lv->th[i].tid, lv->pid, STOP_WAIT_MS,
				       live_stop_hint(procfs_state(
					       lv->pid, lv->th[i].tid)));
	drop_gone(lv);
	return 0;
}

/*
 * Stop every thread.  New threads can only be created by running
 * threads, so once every listed thread is stopped, one more listing that
 * finds nothing new means the whole process is stopped.  The bound only
 * matters for a process creating threads faster than we can catch them.
 */
static int stop_all(struct live *lv, struct cs_err *err)
{
	double deadline = cs_now_ms() + STOP_WAIT_MS;
	size_t round, added = 0;
	int ret;

	for (round = 0; round < STOP_ROUNDS; round++) {
		ret = stop_round(lv, deadline, &added, err);
		if (ret)
			return ret;
		if (!added)
			break;
	}
	if ((!lv->nth && !lv->nleft) || !live_pid_alive(lv->pid))
		return (int)live_exited(err, lv->pid);
	if (round == STOP_ROUNDS)
		return cs_fail(err, CS_ERR_NOT_STOPPED,
			       "process %d keeps creating threads faster than "
			       "they can be stopped; try --no-block", lv->pid);
	return 0;
}

/* The namespace tid of a thread listed before the stop, else read now
 * (reading /proc for every thread would lengthen the stop). */
static int known_ns_tid(const struct memsrc *ms, const struct live *lv,
			int tid)
{
	size_t i;

	if (!lv->other_ns)
		return tid;
	for (i = 0; i < ms->nthreads; i++)
		if (ms->threads[i].tid == tid && ms->threads[i].ns_tid)
			return ms->threads[i].ns_tid;
	return live_ns_tid_of(lv, tid);
}

/* The stopped threads, with their fs_base, as ms->threads, then those
 * left running, and an exited main thread as it was listed (no thread to
 * stop). */
static int publish_threads(struct memsrc *ms, struct live *lv,
			   struct cs_err *err)
{
	struct cs_thread *threads;
	size_t i, n = lv->nth + lv->nleft, live_n = n;

	threads = xcalloc(n + 1, sizeof(*threads));
	for (i = 0; i < ms->nthreads && n == live_n; i++)
		if (ms->threads[i].exited)
			threads[n++] = ms->threads[i];
	for (i = 0; i < lv->nleft; i++) {
		struct cs_thread *t = &threads[lv->nth + i];

		t->tid = lv->left[i].tid;
		t->ns_tid = known_ns_tid(ms, lv, t->tid);
		t->left_running = 1;
		t->left_call = lv->left[i].call;
		t->left_fd = lv->left[i].fd;
		t->left_switches = lv->left[i].switches;
	}
	for (i = 0; i < lv->nth; i++) {
		threads[i].tid = lv->th[i].tid;
		threads[i].ns_tid = known_ns_tid(ms, lv, lv->th[i].tid);
		threads[i].fs_base = lv->th[i].fs_base;
		threads[i].has_fs_base = lv->th[i].has_fs_base;
		threads[i].has_regs = lv->th[i].has_fs_base;
		threads[i].regs = lv->th[i].regs;
	}
	free(ms->threads);
	ms->threads = threads;
	ms->nthreads = n;
	/* The main thread has exited: the live thread chosen at open may
	 * have exited since; one held now cannot. */
	if (lv->mm_id != lv->pid && lv->nth && lv->th[0].tid != lv->mm_id)
		live_reach_through(ms, lv->th[0].tid);
	else if (lv->mm_id != lv->pid && !lv->nth && lv->nleft &&
		 lv->left[0].tid != lv->mm_id)
		/* (one left running may exit meanwhile: still likelier to
		 * live than the one chosen at open) */
		live_reach_through(ms, lv->left[0].tid);
	return 0;
}

/*
 * Holding the threads, on the thread that will let them go (see
 * live_tracer.c): stop them all and read their registers (what the
 * caller then reads needs no tracer).  0 or a status; either way they
 * must be let go.
 */
int live_hold_threads(struct live *lv, struct cs_err *err)
{
	size_t i;
	int ret;

	live_guard_set_tracer((int)syscall(SYS_gettid));
	ret = stop_all(lv, err);
	/* The pause counts from here: what follows is done to a stopped
	 * target. */
	clock_gettime(CLOCK_MONOTONIC, &lv->since);
	/* Registers were read as each stop came in (wait_all); these are
	 * the rest. */
	for (i = 0; !ret && i < lv->nth; i++)
		if (!lv->th[i].has_fs_base)
			read_fs_base(&lv->th[i]);
	if (!ret)
		drop_gone(lv);
	return ret;
}

/*
 * Let them go, from the thread that holds them: those holding a signal
 * by PTRACE_DETACH, which gives it back; the others too when `each`,
 * else the tracer thread's exit detaches them.
 */
void live_let_go(struct live *lv, int each)
{
	size_t i;

	for (i = 0; i < lv->nth; i++) {
		struct live_thread *th = &lv->th[i];

		/* One that never stopped cannot be detached: wait a little
		 * for its stop.  Else the kernel lets it go when coroscope
		 * exits (seized, it is not left stopped). */
		if (each && th->state == TH_SEIZED)
			wait_stop(th, cs_now_ms() + DETACH_WAIT_MS);
		if (each || th->sig)
			detach_thread(th);
		live_guard_remove(th->guard_slot, th->tid);
		th->state = TH_GONE;
	}
	lv->nth = 0;
	live_guard_set_tracer(0);
}

int live_stop(struct memsrc *ms, struct cs_err *err)
{
	struct live *lv = ms->backend;
	double start;
	int ret;

	if (lv->stopped)
		return 0;
	if (lv->pid == getpid())
		return cs_fail(err, CS_ERR_PERMISSION,
			       "cannot stop process %d: it is coroscope itself",
			       lv->pid);
	/* Which threads to leave running, while the copy's memory is
	 * faulted in on the other CPU; that done before the pause, not
	 * during it. */
	live_left_survey(lv);
	memsrc_reserve_wait(ms);
	start = cs_now_ms();
	ret = live_tracer_start(ms, lv, err);
	lv->stop_ms += cs_now_ms() - start;
	/* The mappings as they are now that nothing runs: what was mapped
	 * or unmapped since live_open() must be read (and captured) too. */
	if (!ret)
		ret = refresh_maps(ms, err);
	if (!ret)
		ret = publish_threads(ms, lv, err);
	if (ret) {
		live_tracer_release(lv);
		return ret;
	}
	memsrc_cache_clear(ms);
	lv->stopped = 1;
	hold_for_tests();
	return 0;
}

void live_resume(struct memsrc *ms)
{
	struct live *lv;
	size_t held;

	if (!ms || !ms->backend)
		return;
	lv = ms->backend;
	/* Before the others run again: what was read of a thread left
	 * running is true if it has not run until now. */
	if (lv->stopped)
		live_left_check(lv);
	held = lv->nth;
	live_tracer_release(lv);
	if (lv->stopped) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		/* (every thread left running: nothing was paused) */
		if (held)
			lv->paused_ms += ms_between(&lv->since, &now);
		lv->stopped = 0;
		/* What we cached is only true while the target is stopped,
		 * unless all it can change was captured. */
		if (!ms->frozen)
			memsrc_cache_clear(ms);
	}
}

double live_paused_ms(const struct memsrc *ms)
{
	const struct live *lv = ms->backend;
	double total = lv->paused_ms;

	if (lv->stopped && lv->nth) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		total += ms_between(&lv->since, &now);
	}
	return total;
}

double live_stopped_at_ms(const struct memsrc *ms)
{
	const struct live *lv = ms->backend;

	return (double)lv->since.tv_sec * 1e3 +
	       (double)lv->since.tv_nsec / 1e6;
}

double live_stop_ms(const struct memsrc *ms)
{
	const struct live *lv = ms->backend;

	return lv->stop_ms;
}

int live_alive(const struct memsrc *ms)
{
	return live_pid_alive(ms->pid);
}

/* How long, and in what steps, a process whose main thread has exited
 * is given to finish: SIGKILL takes its threads down one at a time. */
#define SETTLE_STEPS 20
#define SETTLE_STEP_NS 5000000L

int live_alive_settled(const struct memsrc *ms)
{
	struct timespec step = { 0, SETTLE_STEP_NS };
	int k;

	for (k = 0; k < SETTLE_STEPS; k++) {
		char st;

		if (!live_pid_alive(ms->pid))
			return 0;
		/* (0: gone since, or unreadable: asked again) */
		st = procfs_state(ms->pid, 0);
		if (st && !procfs_state_dead(st))
			return 1;
		nanosleep(&step, NULL);
	}
	return live_pid_alive(ms->pid);
}
