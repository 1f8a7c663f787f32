/*
 * How a task's timers (readers/task_timers.c: py_task.sleeps, .times_out)
 * read in a text line, the dump's task tree and `run`'s stuck tasks
 * alike: ", wakes in 598.1s", ", times out in 12.0s".  "In" needs the
 * target's monotonic clock at the read (collection.clock_s) and a loop
 * whose time() is that clock; otherwise only the loop's own due time is
 * said.  A timer past due means its loop has not run since: the words
 * say so ("overdue by").
 */
#include "cli/timer_text.h"

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/tasks.h"

#include "common/banned.h"

int timer_text_known(int clock, double clock_s)
{
	return clock == PY_TIMER_MONOTONIC && clock_s > 0;
}

/* Seconds past due that are still "in 0.0s": a loop's wait ends up to
 * a scheduler's tick after its timer (and its iteration runs them
 * after the I/O callbacks ready with them). */
#define DUE_NOW 0.1

void timer_span_task(struct timer_span *s, const struct py_task *t,
		     int timeout)
{
	timer_span_add(s, timeout ? py_task_wait_timeout(t) : t->sleeps,
		       t->framework && !strcmp(t->framework, "trio"),
		       timeout ? t->timeout_at : t->sleep_until);
}

void timer_span_add(struct timer_span *s, int clock, int trio, double due)
{
	if (!s->n++) {
		s->clock = clock;
		s->trio = trio;
		s->lo = s->hi = due;
		s->mixed = clock == PY_TIMER_NONE;
		return;
	}
	if (clock != s->clock || trio != s->trio)
		s->mixed = 1;
	s->lo = due < s->lo ? due : s->lo;
	s->hi = due > s->hi ? due : s->hi;
}

int timer_text_span(struct strbuf *sb, const struct timer_span *s,
		    int sleep, double clock_s)
{
	int known = timer_text_known(s->clock, clock_s);
	double base = known ? clock_s : 0;

	if (!s->n || s->mixed)
		return 0;
	if (sleep)
		timer_text_sleep(sb, s->n, s->lo - base, s->hi - base, known,
				 s->trio ? TIMER_TRIO : TIMER_ASYNCIO);
	else
		timer_text_timeout(sb, s->n, s->lo - base, s->hi - base,
				   known, s->trio);
	return 1;
}

int timer_text_past_due(double in_s)
{
	return in_s <= -DUE_NOW;
}

/* How a timer's due time is said: from the read, ahead ("wakes in") or
 * past ("overdue by") or both for alike tasks ("due from"), or in the
 * loop's own time ("until" then "loop time", or trio's "trio time"). */
struct when_words {
	const char *in, *overdue, *around, *at;
};

/* Do lo and hi read alike with a tenth?  (Alike tasks' sleeps set in
 * one moment differ by microseconds: "3447.2s .. 3447.2s" said none.) */
static int differ(double lo, double hi)
{
	char a[64], b[64];

	snprintf(a, sizeof(a), "%.1f", lo);
	snprintf(b, sizeof(b), "%.1f", hi);
	return strcmp(a, b) != 0;
}

/* The words, then the time (lo .. hi for alike tasks whose times
 * differ; known: they are from the read, else on the clock named
 * `clock`: "loop", or trio's own, "trio"). */
static void add_when(struct strbuf *sb, const struct when_words *w,
		     size_t count, double lo, double hi, int known,
		     const char *clock)
{
	int range;

	/* Due a moment before the stop, as the loop was about to run it:
	 * not yet a loop that has not run. */
	if (known && lo < 0 && lo > -DUE_NOW)
		lo = 0;
	if (known && hi < 0 && hi > -DUE_NOW)
		hi = 0;
	range = count > 1 && differ(lo, hi);

	if (!known) {
		strbuf_addf(sb, "%s %s time %.1f", w->at, clock, lo);
		if (range)
			strbuf_addf(sb, " .. %.1f", hi);
	} else if (lo >= 0) {
		strbuf_addf(sb, "%s %.1fs", w->in, lo);
		if (range)
			strbuf_addf(sb, " .. %.1fs", hi);
	} else if (hi < 0) {
		/* (its loop did not run when the timer was due) */
		strbuf_addf(sb, "%s %.1fs", w->overdue, -hi);
		if (range)
			strbuf_addf(sb, " .. %.1fs", -lo);
	} else {
		strbuf_addf(sb, "%s %.1fs ago to in %.1fs", w->around, -lo,
			    hi);
	}
}

const char *timer_text_sleep_name(int sched)
{
	static const char *const in[] = {
		"asyncio.sleep", "trio.sleep", "time.sleep", "gevent.sleep"
	};

	return in[sched >= TIMER_ASYNCIO && sched <= TIMER_GEVENT ?
		  sched : TIMER_ASYNCIO];
}

void timer_text_sleep(struct strbuf *sb, size_t count, double lo, double hi,
		      int known, int sched)
{
	static const struct when_words w[2] = {
		{ ", wakes in", ", overdue by", ", due from", " until" },
		{ ", wake in", ", overdue by", ", due from", " until" },
	};

	strbuf_addstr(sb, count > 1 ? ", sleep in " : ", sleeps in ");
	strbuf_addstr(sb, timer_text_sleep_name(sched));
	/* (trio's clock is its run's, not a loop's) */
	add_when(sb, &w[count > 1], count, lo, hi, known,
		 sched == TIMER_TRIO ? "trio" : "loop");
}

void timer_text_timeout(struct strbuf *sb, size_t count, double lo,
			double hi, int known, int trio)
{
	static const struct when_words w[2] = {
		{ ", times out in", ", timeout overdue by",
		  ", timeout due from", ", times out at" },
		{ ", time out in", ", timeouts overdue by",
		  ", timeouts due from", ", time out at" },
	};

	add_when(sb, &w[count > 1], count, lo, hi, known,
		 trio ? "trio" : "loop");
}

void timer_text_tasks(struct strbuf *sb, const struct py_task *const *tasks,
		      size_t n, double clock_s, int times)
{
	struct timer_span sleep, timeout;
	size_t k;

	memset(&sleep, 0, sizeof(sleep));
	memset(&timeout, 0, sizeof(timeout));
	for (k = 0; k < n; k++) {
		timer_span_task(&sleep, tasks[k], 0);
		timer_span_task(&timeout, tasks[k], 1);
	}
	if (times) {
		(void)timer_text_span(sb, &sleep, 1, clock_s);
		(void)timer_text_span(sb, &timeout, 0, clock_s);
		return;
	}
	if (n && !sleep.mixed)
		strbuf_addf(sb, ";sleep %d%s", sleep.clock,
			    timer_text_known(sleep.clock, clock_s) &&
			    timer_text_past_due(sleep.hi - clock_s) ?
			    " overdue" : "");
	if (n && !timeout.mixed)
		strbuf_addf(sb, ";timeout %d", timeout.clock);
}
