/*
 * Each stopped thread's sleep or timed wait, as seconds from the stop:
 * an absolute time on CLOCK_MONOTONIC counts from the stop on the
 * target's monotonic clock (ours, unless it is in another time
 * namespace: then unknown), one on CLOCK_REALTIME from the realtime
 * clock at the stop (the same for every process), and the time a
 * select() or ppoll() had left is from the stop already.  A wait ending
 * within DEADLINE_SOON of the stop is left out: a thread waiting for the
 * GIL waits on a condition in turns of the switch interval (5 ms), and a
 * wait that ends that soon tells nothing.  Only a live target's: a core
 * has no clock of its moment.
 */
#include "cli/collect_deadlines.h"

#include <stdlib.h>
#include <time.h>

#include "attach/live.h"
#include "attach/syscall_deadline.h"
#include "common/procfs.h"
#include "common/util.h"
#include "common/banned.h"

#define DEADLINE_SOON 0.1

/* CLOCK_REALTIME at the stop, which was stop_ms on CLOCK_MONOTONIC. */
static double realtime_at(double stop_ms)
{
	struct timespec rt;

	clock_gettime(CLOCK_REALTIME, &rt);
	return (double)rt.tv_sec + (double)rt.tv_nsec / 1e9 -
	       (cs_now_ms() - stop_ms) / 1e3;
}

static int by_tid(const void *a, const void *b)
{
	const struct thread_deadline *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

void collect_deadlines(struct collection *c)
{
	double stop_ms, mono = 0, real, in, slack;
	struct cs_deadline d;
	size_t i;

	if (!c->is_live || !c->ms || (stop_ms = live_stopped_at_ms(c->ms)) <= 0)
		return;
	if (procfs_same_clock(c->pid))
		mono = stop_ms / 1e3;
	real = realtime_at(stop_ms);
	/* (bounded by the threads the source lists) */
	for (i = 0; i < c->ms->nthreads; i++) {
		cs_thread_deadline(c->ms, &c->ms->threads[i], &d);
		slack = 0;
		switch (d.clock) {
		case CS_DEADLINE_MONOTONIC:
			if (mono <= 0)
				continue;
			in = d.at - mono;
			break;
		case CS_DEADLINE_REALTIME:
			in = d.at - real;
			break;
		case CS_DEADLINE_LEFT:
			in = d.at;
			slack = (live_stop_ms(c->ms) +
				 live_paused_ms(c->ms)) / 1e3;
			break;
		default:
			continue;
		}
		if (in < DEADLINE_SOON)
			continue;
		c->deadlines = xgrow(c->deadlines, &c->deadlines_alloc,
				     c->ndeadlines + 1, sizeof(*c->deadlines));
		c->deadlines[c->ndeadlines].tid = c->ms->threads[i].tid;
		c->deadlines[c->ndeadlines].sleep = d.sleep;
		c->deadlines[c->ndeadlines].in_s = in;
		c->deadlines[c->ndeadlines].slack_s = slack;
		c->ndeadlines++;
	}
	if (c->ndeadlines > 1)
		qsort(c->deadlines, c->ndeadlines, sizeof(*c->deadlines),
		      by_tid);
}

/* (every report asks it of every thread: 2,000 threads in timed waits
 * made a linear search 4 million steps) */
const struct thread_deadline *collect_deadline_of(const struct collection *c,
						  int tid)
{
	struct thread_deadline key;

	if (tid <= 0 || !c->ndeadlines)
		return NULL;
	key.tid = tid;
	return bsearch(&key, c->deadlines, c->ndeadlines,
		       sizeof(*c->deadlines), by_tid);
}
