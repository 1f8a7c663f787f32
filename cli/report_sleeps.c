/*
 * A task asleep in asyncio.sleep(): when its loop's timer is due
 * (readers/task_sleeps.c), as its "awaiting" object in JSON and after
 * its name in the task tree.  "Wakes in" needs the target's monotonic
 * clock at the read (collection.clock_s) and a loop whose time() is
 * that clock; otherwise only the loop's own due time is said.  A timer
 * past due means its loop has not run since: the text says so.
 */
#include "cli/report.h"

#include "common/banned.h"

int report_sleep_known(const struct py_task *t, double clock_s)
{
	return t->sleeps == PY_SLEEP_MONOTONIC && clock_s > 0;
}

void report_json_sleep(struct json *j, const struct py_task *t,
		       double clock_s)
{
	json_begin_object(j);
	json_key_addr(j, "id", t->waiter);
	json_key_string(j, "type", t->waiter_type ? t->waiter_type : "?");
	json_key(j, "sleep_until");
	json_double(j, t->sleep_until);
	json_key(j, "wakes_in_s");
	if (report_sleep_known(t, clock_s))
		json_double(j, t->sleep_until - clock_s);
	else
		json_null(j);
	json_end_object(j);
}

/* ", sleeps in asyncio.sleep, wakes in 598.1s" for one task; for
 * `count` alike ones whose timers are due from lo to hi seconds after
 * the read, ", sleep ..., wake in 10.0s .. 59.9s".  known: lo and hi
 * are that; else they are the loop's own times (one task's: lo). */
void report_text_sleep(FILE *out, size_t count, double lo, double hi,
		       int known)
{
	int one = count == 1;

	fprintf(out, ", %s in asyncio.sleep", one ? "sleeps" : "sleep");
	if (!known) {
		fprintf(out, " until loop time %.1f", lo);
		if (!one && hi > lo)
			fprintf(out, " .. %.1f", hi);
		return;
	}
	if (lo >= 0) {
		fprintf(out, ", %s in %.1fs", one ? "wakes" : "wake", lo);
		if (!one && hi > lo)
			fprintf(out, " .. %.1fs", hi);
	} else if (hi < 0 || one) {
		/* (its loop did not run when the timer was due) */
		fprintf(out, ", overdue by %.1fs", -hi);
		if (!one && hi > lo)
			fprintf(out, " .. %.1fs", -lo);
	} else {
		fprintf(out, ", due from %.1fs ago to in %.1fs", -lo, hi);
	}
}
