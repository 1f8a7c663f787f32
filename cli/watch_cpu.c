#include "cli/watch_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/stacks.h"
#include "common/banned.h"

/*
 * status: the State letter, and voluntary_ctxt_switches: the times the
 * thread went to sleep of its own accord.  Unlike schedstat's times-run
 * they do not grow when the thread is preempted, which a busy host does
 * to a thread woken by our resume before it can go back to sleep.
 */
static void thread_sleeps_read(int pid, int tid, struct watch_thread_cpu *out)
{
	char status[PROCFS_STATUS_MAX];
	const char *state;
	size_t len;
	long n;

	out->sleeps = -1;
	out->state = '\0';
	if (procfs_status_read(pid, tid, status, sizeof(status)) < 0)
		return;
	state = procfs_status_text(status, "State", &len);
	if (state && len > 0)
		out->state = state[0];
	if (procfs_status_long(status, "voluntary_ctxt_switches", &n) == 0 &&
	    n >= 0)
		out->sleeps = n;
}

/*
 * schedstat is exact; stat's utime and stime come in clock ticks and
 * cannot see a thread that wakes for microseconds at a time.  stat is
 * the fallback for kernels without schedstat.
 */
static int thread_cpu_read(int pid, int tid, struct watch_thread_cpu *out)
{
	struct procfs_schedstat ss;
	struct procfs_stat st;
	long ticks;

	out->tid = tid;
	thread_sleeps_read(pid, tid, out);
	if (procfs_schedstat(pid, tid, &ss) == 0) {
		out->cpu_s = (double)ss.cpu_ns / 1e9;
		out->wait_s = (double)ss.wait_ns / 1e9;
		out->runs = (long long)ss.runs;
		return 0;
	}
	ticks = sysconf(_SC_CLK_TCK);
	if (procfs_stat(pid, tid, &st) < 0 || ticks <= 0)
		return -1;
	out->cpu_s = (double)(st.utime + st.stime) / (double)ticks;
	out->wait_s = -1;
	out->runs = -1;
	return 0;
}

static int by_tid(const void *a, const void *b)
{
	int x = ((const struct watch_thread_cpu *)a)->tid;
	int y = ((const struct watch_thread_cpu *)b)->tid;

	return (x > y) - (x < y);
}

const struct watch_thread_cpu *watch_cpu_find(const struct watch_cpu *t,
					      int tid)
{
	struct watch_thread_cpu key;

	key.tid = tid;
	return t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), by_tid) : NULL;
}

void watch_cpu_read(struct watch_cpu *t, int pid)
{
	char dir[64];
	int *tids;
	size_t n, i;

	t->n = 0;
	t->at_ms = cs_now_ms();
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	if (procfs_list_ids(dir, PY_MAX_THREADS, 0, &tids, &n) < 0)
		return;
	/* ascending tids: the table comes out sorted */
	for (i = 0; i < n; i++) {
		struct watch_thread_cpu tc;

		if (thread_cpu_read(pid, tids[i], &tc) < 0)
			continue;
		t->v = xgrow(t->v, &t->alloc, t->n + 1, sizeof(*t->v));
		t->v[t->n++] = tc;
	}
	free(tids);
}

void watch_cpu_release(struct watch_cpu *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static int asleep(char state)
{
	return state == 'S' || state == 'D' || state == 'I';
}

/*
 * A thread blocked for good still goes back to sleep once after each of
 * our stops: our resume wakes it, it restarts its wait and sleeps again,
 * in the window when it had not yet done so as `before` was read (on a
 * busy host it may wait long for a CPU).  Whether it had cannot be told
 * for sure (a thread sets its state to sleeping before it gives up the
 * CPU, and may be preempted in between), so that one sleep is always
 * ours: a single wake of its own in the window goes unseen.  Whatever
 * it used of a CPU meanwhile and waited for one is ours too: it is left
 * out, unless the thread is running as the window ends or used a
 * quarter of it (a host that takes the CPU from a guest for a while may
 * charge that to the thread; CI once saw a thread blocked on a lock for
 * good "moving").  Without a stop (--no-block) there is nothing of ours.
 */
static void own_share(const struct watch_thread_cpu *a,
		      const struct watch_thread_cpu *b, int after_stop,
		      struct watch_window *w)
{
	long sleeps = (long)(b->sleeps - a->sleeps);

	w->sleeps = sleeps;
	if (!after_stop)
		return;
	w->sleeps = sleeps > 1 ? sleeps - 1 : 0;
	if (!w->sleeps && asleep(b->state) && w->cpu_s < w->window_s / 4) {
		w->cpu_s = 0;
		w->wait_s = w->wait_s < 0 ? -1 : 0;
	}
}

void watch_cpu_window(const struct watch_cpu *before,
		      const struct watch_cpu *now, int tid, int after_stop,
		      struct watch_window *w)
{
	const struct watch_thread_cpu *a = watch_cpu_find(before, tid);
	const struct watch_thread_cpu *b = watch_cpu_find(now, tid);

	w->cpu_s = -1;
	w->wait_s = -1;
	w->sleeps = -1;
	w->window_s = 0;
	if (!a || !b)
		return;
	w->window_s = (now->at_ms - before->at_ms) / 1000;
	w->cpu_s = b->cpu_s >= a->cpu_s ? b->cpu_s - a->cpu_s : 0;
	if (a->wait_s >= 0 && b->wait_s >= a->wait_s)
		w->wait_s = b->wait_s - a->wait_s;
	if (a->sleeps >= 0 && b->sleeps >= a->sleeps) {
		own_share(a, b, after_stop, w);
	} else if (a->runs >= 0 && b->runs >= a->runs) {
		/* put on a CPU once to go back to sleep, preemptions
		 * counted too: the best there is without status */
		w->sleeps = (long)(b->runs - a->runs);
		if (after_stop)
			w->sleeps = w->sleeps > 1 ? w->sleeps - 1 : 0;
	}
}
