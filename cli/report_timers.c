/*
 * A task's timers (readers/task_timers.c): when asyncio.sleep() wakes
 * it, when its timeout ends its wait; in JSON in its "awaiting" object,
 * in the task tree after its name.  "In" needs the target's monotonic
 * clock at the read (collection.clock_s) and a loop whose time() is that
 * clock; otherwise only the loop's own due time is said.  A timer past
 * due means its loop has not run since: the text says so.
 */
#include "cli/report.h"

#include "common/banned.h"

int report_timer_known(int clock, double clock_s)
{
	return clock == PY_TIMER_MONOTONIC && clock_s > 0;
}

/* "key": the due time, and "in_key": how long from the read, or null. */
static void json_timer(struct json *j, const char *key, size_t klen,
		       const char *in_key, size_t in_klen, int clock,
		       double at, double clock_s)
{
	json_key_lit(j, key, klen);
	json_double(j, at);
	json_key_lit(j, in_key, in_klen);
	if (report_timer_known(clock, clock_s))
		json_double(j, at - clock_s);
	else
		json_null(j);
}

void report_json_timed_awaiting(struct json *j, const struct py_task *t,
				double clock_s)
{
	json_begin_object(j);
	json_key_addr(j, "id", t->waiter);
	json_key_string(j, "type", t->waiter_type ? t->waiter_type : "?");
	if (t->sleeps)
		json_timer(j, JSON_KEY_ARGS("sleep_until"),
			   JSON_KEY_ARGS("wakes_in_s"), t->sleeps,
			   t->sleep_until, clock_s);
	if (t->times_out)
		json_timer(j, JSON_KEY_ARGS("timeout_at"),
			   JSON_KEY_ARGS("times_out_in_s"), t->times_out,
			   t->timeout_at, clock_s);
	json_end_object(j);
}

/* Seconds past due that are still "in 0.0s": a loop's wait ends up to
 * a scheduler's tick after its timer (and its iteration runs them
 * after the I/O callbacks ready with them). */
#define DUE_NOW 0.1

/* How a timer's due time is said: from the read, ahead ("wakes in") or
 * past ("overdue by") or both for alike tasks ("due from"), or in the
 * loop's own time ("until loop time"). */
struct when_words {
	const char *in, *overdue, *around, *at;
};

/* The words, then the time (lo .. hi for alike tasks whose times
 * differ; known: they are from the read). */
static void text_when(FILE *out, const struct when_words *w, size_t count,
		      double lo, double hi, int known)
{
	int range;

	/* Due a moment before the stop, as the loop was about to run it:
	 * not yet a loop that has not run. */
	if (known && lo < 0 && lo > -DUE_NOW)
		lo = 0;
	if (known && hi < 0 && hi > -DUE_NOW)
		hi = 0;
	range = count > 1 && hi > lo;

	if (!known) {
		fprintf(out, "%s %.1f", w->at, lo);
		if (range)
			fprintf(out, " .. %.1f", hi);
	} else if (lo >= 0) {
		fprintf(out, "%s %.1fs", w->in, lo);
		if (range)
			fprintf(out, " .. %.1fs", hi);
	} else if (hi < 0) {
		/* (its loop did not run when the timer was due) */
		fprintf(out, "%s %.1fs", w->overdue, -hi);
		if (range)
			fprintf(out, " .. %.1fs", -lo);
	} else {
		fprintf(out, "%s %.1fs ago to in %.1fs", w->around, -lo, hi);
	}
}

void report_text_sleep(FILE *out, size_t count, double lo, double hi,
		       int known)
{
	static const struct when_words one = {
		", wakes in", ", overdue by", ", due from", " until loop time"
	}, many = {
		", wake in", ", overdue by", ", due from", " until loop time"
	};

	fprintf(out, ", %s in asyncio.sleep", count > 1 ? "sleep" : "sleeps");
	text_when(out, count > 1 ? &many : &one, count, lo, hi, known);
}

void report_text_timeout(FILE *out, size_t count, double lo, double hi,
			 int known)
{
	static const struct when_words one = {
		", times out in", ", timeout overdue by", ", timeout due from",
		", times out at loop time"
	}, many = {
		", time out in", ", timeouts overdue by", ", timeouts due from",
		", time out at loop time"
	};

	text_when(out, count > 1 ? &many : &one, count, lo, hi, known);
}
