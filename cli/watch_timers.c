/*
 * A task's asyncio timers in `watch` (readers/task_timers.c finds them):
 * what a sample records of them, a task asleep idle; the words its lines
 * say them in (cli/timer_text.c, as the dump); its JSON members.
 */
#include "cli/watch_timers.h"

#include <string.h>

#include "cli/collect.h"
#include "cli/json.h"
#include "cli/timer_text.h"
#include "common/strbuf.h"
#include "readers/code.h"

#include "common/banned.h"

/* Whose sleep an item's is (cli/timer_text.h): a trio task's label is
 * its framework. */
static int sched_of(const struct watch_item *it)
{
	if (it->kind == WATCH_THREAD)
		return TIMER_THREAD;
	if (it->kind == WATCH_GREENLET)
		return TIMER_GEVENT;
	return it->kind == WATCH_TASK && it->label &&
	       !strcmp(it->label, "trio") ? TIMER_TRIO : TIMER_ASYNCIO;
}

static void timer_set(struct watch_timer *w, int clock, double due,
		      double clock_s)
{
	w->on = w->timed = clock != PY_TIMER_NONE;
	w->due = due;
	w->known = timer_text_known(clock, clock_s);
	w->in_s = w->known ? due - clock_s : 0;
}

/*
 * The task's timers, as the dump says them (cli/report_tasks.c): asleep
 * in asyncio.sleep(), a timeout on what it awaits.  Asleep and not past
 * due, it is idle: its loop's timer will wake it, as run's causes leave
 * it out; past due, its loop has not run since, and it counts as
 * without progress as anything else.  Its sleep's words then say what it
 * waits on (o->waits_on, "Future in sleep", dropped).  A task parked in
 * asyncio.sleep() whose timer could not be read (py_task.timers_unread:
 * a uvloop release laid out otherwise) is asleep all the same, when
 * unknown; not one whose timer was read and is gone (it fired, and its
 * loop has not run the task since).  One whose cancel was requested
 * is not idle asleep.
 */
void watch_task_timers(struct watch_obs *o, const struct py_task *task,
		       const struct py_gen *inner, double clock_s)
{
	timer_set(&o->sleep, task->sleeps, task->sleep_until, clock_s);
	if (!o->sleep.on && task->timers_unread && task->waiter && inner &&
	    inner->has_frame &&
	    py_code_is(inner->code, "/asyncio/tasks.py", "sleep"))
		o->sleep.on = 1;
	/* (as in the dump's JSON: a timeout on a wait) */
	timer_set(&o->timeout, py_task_wait_timeout(task), task->timeout_at,
		  clock_s);
	if (!o->sleep.on)
		return;
	o->waits_on = NULL;
	/* (not one cancelled that sleeps on: it should have ended,
	 * cli/run_cancelled.h) */
	if (!o->idle && task->cancels_requested <= 0 &&
	    !(o->sleep.known && timer_text_past_due(o->sleep.in_s)))
		o->idle = task->framework ? "asleep in trio.sleep" :
			  "asleep in asyncio.sleep";
}

void watch_greenlet_timers(struct watch_obs *o, const struct py_frame *inner)
{
	if (!inner || !inner->code ||
	    !py_code_is(inner->code, "/gevent/hub.py", "sleep"))
		return;
	o->sleep.on = 1;
	o->waits_on = NULL;
	if (!o->idle)
		o->idle = "asleep in gevent.sleep";
}

void watch_thread_timers(struct watch_obs *o, const struct thread_deadline *d,
			 double clock_s)
{
	struct watch_timer *w;

	/* (only a live target's, whose clock is known: a monotonic due
	 * time, as a task's) */
	if (!d || clock_s <= 0)
		return;
	w = d->sleep ? &o->sleep : &o->timeout;
	timer_set(w, PY_TIMER_MONOTONIC, clock_s + d->in_s, clock_s);
	w->slack = d->slack_s;
}

/* The sleeps (sleep 1) or the timeouts of items idx[m[0..n)]: the
 * first and last of their times, from the sample where known (*timed:
 * any); 0 when one of them has none, or is known otherwise. */
static int timer_range(const struct watch_item *items, const size_t *idx,
		       const size_t *m, size_t n, int sleep, double *lo,
		       double *hi, int *known, int *timed)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const struct watch_item *it = &items[idx[m[k]]];
		const struct watch_timer *w = sleep ? &it->sleep : &it->timeout;
		double at = w->known ? w->in_s : w->due;

		if (it->gone || !w->on || (k && (w->known != *known ||
						 w->timed != *timed)))
			return 0;
		if (!k) {
			*known = w->known;
			*timed = w->timed;
			*lo = *hi = at;
		}
		*lo = at < *lo ? at : *lo;
		*hi = at > *hi ? at : *hi;
	}
	return n > 0;
}

/* After ", sleeps in asyncio.sleep" in an event or a line's key (no
 * times): " (no timer)", " (loop time)", ", overdue" or nothing; for
 * gevent's, whose timer (libev's) is not read, nothing. */
static const char *sleep_note(int sched, int timed, int known, double hi)
{
	if (!timed)
		return sched == TIMER_GEVENT ? "" : " (no timer)";
	if (!known)
		return sched == TIMER_TRIO ? " (trio time)" : " (loop time)";
	return timer_text_past_due(hi) ? ", overdue" : "";
}

/* ", then waits again (seen 4 times)": threads whose timed waits ran
 * out and began again at their place, every one (the fewest times);
 * nothing when one did not. */
static void add_timed_again(struct strbuf *sb, const struct watch_item *items,
			    const size_t *idx, const size_t *m, size_t n)
{
	int least = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		const struct watch_item *it = &items[idx[m[k]]];

		if (it->kind != WATCH_THREAD || it->timed_again <= 0)
			return;
		if (!k || it->timed_again < least)
			least = it->timed_again;
	}
	if (!n)
		return;
	strbuf_addf(sb, ", then wait%s again (%sseen %d time%s)",
		    n > 1 ? "" : "s", n > 1 ? "each " : "", least,
		    least == 1 ? "" : "s");
}

/*
 * ", sleeps in asyncio.sleep, wakes in 12.0s", ", times out in 3.0s": the
 * asyncio timers of items idx[m[0..n)], as the dump says them.  Without
 * times (an event, a line's key: alike lines stay alike as the times
 * move) only whether they sleep, on which kind of clock, and overdue
 * (a stuck event's reason): a sleep's words stand for what it waits on.
 */
void watch_add_timers(struct strbuf *sb, const struct watch_item *items,
		      const size_t *idx, const size_t *m, size_t n, int times)
{
	/* (alike items have one kind and label: trio's tasks apart) */
	int sched = n ? sched_of(&items[idx[m[0]]]) : TIMER_ASYNCIO;
	int trio = sched == TIMER_TRIO;
	const char *in = timer_text_sleep_name(sched);
	double lo, hi;
	int known, timed;

	if (timer_range(items, idx, m, n, 1, &lo, &hi, &known, &timed)) {
		if (times && timed) {
			timer_text_sleep(sb, n, lo, hi, known, sched);
		} else {
			strbuf_addstr(sb, n > 1 && times ? ", sleep in " :
				      ", sleeps in ");
			strbuf_addstr(sb, in);
			if (!times)
				strbuf_addstr(sb, sleep_note(sched, timed,
							     known, hi));
		}
	}
	if (timer_range(items, idx, m, n, 0, &lo, &hi, &known, &timed) &&
	    times) {
		timer_text_timeout(sb, n, lo, hi, known, trio);
		add_timed_again(sb, items, idx, m, n);
	}
}

/* A task's asyncio timers at the last sample, as the dump's "awaiting"
 * object has them: due in its loop's time, and in seconds from the
 * sample where that is known; null for none. */
void watch_json_timers(struct json *j, const struct watch_item *it)
{
	const struct {
		const struct watch_timer *w;
		const char *at, *in;
	} keys[] = {
		{ &it->sleep, "sleep_until", "wakes_in_s" },
		{ &it->timeout, "timeout_at", "times_out_in_s" },
	};
	size_t k;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		int on = !it->gone && keys[k].w->on && keys[k].w->timed;

		json_key_str(j, keys[k].at);
		if (on)
			json_double(j, keys[k].w->due);
		else
			json_null(j);
		json_key_str(j, keys[k].in);
		if (on && keys[k].w->known)
			json_double(j, keys[k].w->in_s);
		else
			json_null(j);
	}
}
