/*
 * Threads left running while the others are stopped: those asleep in a
 * call that sends bytes (write(2), send(2) and their kin).
 *
 * Why: PTRACE_INTERRUPT makes a signal pending, and a write to a pipe,
 * socket or terminal that has sent part of its bytes and sleeps for room
 * for the rest then returns the part (the kernel restarts only a call
 * that did nothing).  Most callers send the rest; CPython's text streams
 * over an unbuffered binary layer (python -u, PYTHONUNBUFFERED=1) do
 * not, and the rest of that print() is lost.  Stopping such a thread
 * would harm the target, so it is not stopped.
 *
 * Reading it anyway is sound while it stays in that call: it runs no
 * Python code (it let the GIL go, or on a free-threaded build detached),
 * and its frames are in memory as they were.  It is read like the
 * others, without registers.  Whether it stayed in the call the whole
 * time the target was read is checked afterwards (live_left_check()):
 * - write(2) and its kin count every call that ends, however it ends, in
 *   the thread's syscw (/proc/PID/task/TID/io): read before its syscall
 *   line at the start and unchanged at the end, the call seen has not
 *   returned.  A slow reader wakes the writer again and again inside
 *   that one call (it copies what fits and sleeps again): no return.
 * - For the send family, which is not counted so, the context switches:
 *   a thread woken since is either on a CPU now, which its syscall file
 *   says ("running"), or was switched away again, which counts.  Read
 *   before its syscall line at the start and after it at the end,
 *   unchanged counts and an unchanged line mean it never ran.
 * When one may have run, the caller reads the whole target again
 * (cli/collect.c).
 *
 * Which threads: live_left_survey() looks before the stop, outside the
 * pause; live_left_keep(), just before a thread would be seized, looks
 * again.  A write call's thread is kept while its syscw is what it was
 * when the survey saw it in the call, even if a reader has just woken
 * it inside (its syscall file then says "running"); a send call's only
 * while asleep in it.
 *
 * A thread the survey finds on a CPU or waiting for one ("running") may
 * be a writer a reader has just woken inside its call, about to sleep
 * in it again (under load it may wait for a CPU for milliseconds): the
 * survey looks at it again a few times, and live_left_keep() once more
 * before seizing it; if it sleeps in a sending call by then, it is left
 * running like the others.  A writer whose call the survey saw has ended
 * by then, and that runs, is looked at a few times more (in its next
 * call, woken, most likely).
 *
 * What is left: a thread that enters such a call after it was looked at,
 * or that stays running throughout, is stopped as before.
 */
#include "attach/live.h"
#include "attach/live_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

/* Threads whose syscall file is read before a stop, the first by tid
 * (the main thread first): each read takes ~7 us, outside the pause but
 * not outside the wall time (14 ms for 2,000 threads).  The others are
 * stopped whatever they sleep in. */
#define SURVEY_MAX 256

/* Threads found running are looked at again up to RUNNING_POLLS times,
 * after RUNNING_POLL_US, then twice as long each time: a writer woken in
 * its call copies what fits in microseconds, then sleeps again, but on
 * a crowded CPU it may first wait for the CPU a scheduler slice (~3 ms).
 * At most 3.1 ms more of wall time, outside the pause, when a thread
 * keeps a CPU busy throughout. */
#define RUNNING_POLLS 5
#define RUNNING_POLL_US 100

/* A thread the survey saw in a sending call whose call has ended by the
 * time it would be seized, and that runs: most likely the writer in its
 * next call, woken in it.  Looked at again up to KEEP_POLLS times, after
 * KEEP_POLL_US, then twice as long each time: at most 1.55 ms more of
 * the pause for one thread, KEEP_BUDGET_US for all of one stop. */
#define KEEP_POLLS 5
#define KEEP_POLL_US 50
#define KEEP_BUDGET_US 3000
_Static_assert((KEEP_POLL_US << KEEP_POLLS) < 1000000 &&
	       (RUNNING_POLL_US << RUNNING_POLLS) < 1000000,
	       "a poll's sleep fits in tv_nsec");

/* What read_call() found. */
enum {
	CALL_GONE = -1,     /* the file cannot be read */
	CALL_OTHER = 0,     /* asleep in another call, or in none */
	CALL_SENDS = 1,     /* asleep in a call that sends bytes */
	CALL_RUNNING = 2,   /* on a CPU or waiting for one: which call is
			       not said */
};

/* The call a thread sleeps in, from its syscall file ("nr args sp pc",
 * or "running"): CALL_SENDS with l's call, fd and line_hash set, or
 * another of the values above. */
static int read_call(int pid, int tid, struct live_left *l)
{
	char path[64], line[256], *end;
	unsigned long long fd;
	uint64_t h = 14695981039346656037ULL;  /* FNV-1a */
	const char *p;
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (procfs_read(path, line, sizeof(line)) <= 0)
		return CALL_GONE;
	if (!strncmp(line, "running", 7))
		return CALL_RUNNING;
	nr = strtol(line, &end, 10);
	if (end == line || *end != ' ' || !cs_syscall_sends(nr))
		return CALL_OTHER;
	fd = strtoull(end + 1, &end, 16);
	if (fd > 0x7fffffffULL)
		return CALL_OTHER;
	for (p = line; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	l->tid = tid;
	l->call = nr;
	l->fd = (int)fd;
	l->line_hash = h;
	return CALL_SENDS;
}

/* The thread's write calls ended (syscw in its io file): 0, or -1 when
 * it cannot be read (gone, or no I/O accounting in this kernel). */
static int read_syscw(int pid, int tid, int64_t *out)
{
	char path[64], text[512], *at, *end;
	long long v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", pid, tid);
	if (procfs_read(path, text, sizeof(text)) <= 0 ||
	    !(at = strstr(text, "\nsyscw: ")))
		return -1;
	v = strtoll(at + 8, &end, 10);
	if (end == at + 8 || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* Asleep in a sending call, as first seen: the counts, then the call (a
 * call ended or a switch after the counts were read shows at the
 * check). */
static int read_sleep(int pid, int tid, struct live_left *l)
{
	uint64_t sw;

	if (procfs_context_switches(pid, tid, &sw) < 0)
		return CALL_GONE;
	l->switches = sw;
	if (read_syscw(pid, tid, &l->syscw) < 0)
		l->syscw = -1;
	return read_call(pid, tid, l);
}

/* read_sleep(), again while the thread runs (bounded: KEEP_POLLS more
 * looks, the first after KEEP_POLL_US, then twice as long each time,
 * while the stop's *budget_us lasts). */
static int read_sleep_soon(int pid, int tid, struct live_left *l,
			   long *budget_us)
{
	long us = KEEP_POLL_US;
	int ret = read_sleep(pid, tid, l), polls = KEEP_POLLS;

	while (ret == CALL_RUNNING && polls-- > 0 && *budget_us >= us) {
		struct timespec pause = { 0, us * 1000L };

		nanosleep(&pause, NULL);
		*budget_us -= us;
		us *= 2;
		ret = read_sleep(pid, tid, l);
	}
	return ret;
}

/* Did the thread left as *was stay in the call it was seen in? */
static int stayed(const struct live *lv, const struct live_left *was)
{
	struct live_left now;
	int64_t syscw;

	if (was->syscw >= 0 && cs_syscall_counts_syscw(was->call))
		return read_syscw(lv->pid, was->tid, &syscw) == 0 &&
		       syscw == was->syscw;
	/* Gone, awake, or asleep again elsewhere or later: it ran.  The
	 * call, then the counts: asleep now, a run since the first look
	 * ended in a switch, counted by then. */
	return read_call(lv->pid, was->tid, &now) == CALL_SENDS &&
	       now.line_hash == was->line_hash &&
	       procfs_context_switches(lv->pid, was->tid, &now.switches) == 0 &&
	       now.switches == was->switches;
}

static int left_cmp(const void *a, const void *b)
{
	const struct live_left *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/*
 * A thread seen in a sending call.  For the write calls, its syscw read
 * between two reads of the same syscall line: from then on, an
 * unchanged syscw means it is still in that call (one that ended after
 * the syscw was read would have counted), asleep or woken inside it.
 * CALL_SENDS with *l set, or what read_call() said.
 */
static int survey_one(int pid, int tid, struct live_left *l)
{
	struct live_left again;
	int ret = read_call(pid, tid, l);

	l->syscw = -1;
	l->switches = 0;
	if (ret != CALL_SENDS)
		return ret;
	/* (a reader that frees room in the pipe wakes it: cli/ tells a
	 * reader that read nothing since by an unchanged count) */
	if (procfs_context_switches(pid, tid, &l->switches) < 0)
		l->switches = UINT64_MAX;
	if (!cs_syscall_counts_syscw(l->call))
		return CALL_SENDS;
	if (read_syscw(pid, tid, &l->syscw) < 0 ||
	    read_call(pid, tid, &again) != CALL_SENDS ||
	    again.line_hash != l->line_hash)
		l->syscw = -1;
	return CALL_SENDS;
}

/* Survey tid: a sending thread is added to lv->sending; one running
 * is kept at running[*nrunning]. */
static void survey_add(struct live *lv, int tid, int *running,
		       size_t *nrunning)
{
	int ret = survey_one(lv->pid, tid, &lv->sending[lv->nsending]);

	if (ret == CALL_SENDS)
		lv->nsending++;
	else if (ret == CALL_RUNNING)
		running[(*nrunning)++] = tid;
}

/* The threads found running, looked at again until they sleep (bounded:
 * RUNNING_POLLS rounds); those still running are kept in lv->running. */
static void survey_running(struct live *lv, int *running, size_t n)
{
	struct timespec pause = { 0, RUNNING_POLL_US * 1000L };
	size_t i, left;
	int round;

	for (round = 0; round < RUNNING_POLLS && n; round++) {
		nanosleep(&pause, NULL);
		pause.tv_nsec *= 2;
		left = n;
		n = 0;
		for (i = 0; i < left; i++)
			survey_add(lv, running[i], running, &n);
	}
	lv->running = running;
	lv->nrunning = n;
	if (n > 1)
		qsort(lv->running, n, sizeof(*lv->running), live_tid_cmp);
}

void live_left_survey(struct live *lv)
{
	int *tids, *running;
	size_t n, i, nrunning = 0;

	lv->nleft = 0;
	lv->nsending = 0;
	lv->keep_budget_us = KEEP_BUDGET_US;
	free(lv->running);
	lv->running = NULL;
	lv->nrunning = 0;
	if (lv->stop_every || live_list_tasks(lv->pid, &tids, &n) < 0)
		return;
	lv->sending = xgrow(lv->sending, &lv->asending, n ? n : 1,
			    sizeof(*lv->sending));
	running = xcalloc(n ? n : 1, sizeof(*running));
	for (i = 0; i < n && i < SURVEY_MAX; i++)
		survey_add(lv, tids[i], running, &nrunning);
	survey_running(lv, running, nrunning);
	/* Listed ascending after the main thread: sort for bsearch. */
	if (lv->nsending > 1)
		qsort(lv->sending, lv->nsending, sizeof(*lv->sending),
		      left_cmp);
	free(tids);
}

int live_left_keep(struct live *lv, int tid)
{
	struct live_left key, l;
	const struct live_left *seen;
	int64_t syscw;

	key.tid = tid;
	seen = lv->nsending ? bsearch(&key, lv->sending, lv->nsending,
				      sizeof(*lv->sending), left_cmp) : NULL;
	if (!seen) {
		/* running when the survey ended: asleep in such a call now? */
		if (!lv->nrunning ||
		    !bsearch(&tid, lv->running, lv->nrunning,
			     sizeof(*lv->running), live_tid_cmp) ||
		    read_sleep(lv->pid, tid, &l) != CALL_SENDS)
			return 0;
	} else if (seen->syscw >= 0 &&
		   read_syscw(lv->pid, tid, &syscw) == 0 &&
		   syscw == seen->syscw) {
		/* Still in the write call seen, asleep or woken inside it
		 * (a reader taking bytes wakes it there: it is then
		 * runnable, and its syscall file says "running"). */
		l = *seen;
	} else if (read_sleep_soon(lv->pid, tid, &l,
				   &lv->keep_budget_us) != CALL_SENDS) {
		return 0;
	}
	lv->left = xgrow(lv->left, &lv->aleft, lv->nleft + 1,
			 sizeof(*lv->left));
	lv->left[lv->nleft++] = l;
	return 1;
}


void live_left_check(struct live *lv)
{
	size_t i;

	for (i = 0; i < lv->nleft; i++)
		if (!stayed(lv, &lv->left[i]))
			lv->left_ran = 1;
}

void live_left_free(struct live *lv)
{
	free(lv->sending);
	free(lv->left);
	free(lv->running);
	lv->sending = NULL;
	lv->left = NULL;
	lv->running = NULL;
	lv->nsending = lv->asending = lv->nleft = lv->aleft = 0;
	lv->nrunning = 0;
}

void live_stop_every_thread(struct memsrc *ms, int every)
{
	struct live *lv = ms->backend;

	lv->stop_every = every;
}

int live_left_ran(struct memsrc *ms)
{
	struct live *lv = ms->backend;
	int ran = lv->left_ran;

	lv->left_ran = 0;
	return ran;
}
