/*
 * A task's timers (readers/task_timers.c) in JSON, in its "awaiting"
 * object: when asyncio.sleep() wakes it, when its timeout ends its wait,
 * the due time in the loop's time and, where cli/timer_text.h says it is
 * known, how long from the read.  (The text: cli/timer_text.c.)
 */
#include "cli/report.h"

#include "cli/timer_text.h"

#include "common/banned.h"

/* "key": the due time, and "in_key": how long from the read, or null. */
static void json_timer(struct json *j, const char *key, size_t klen,
		       const char *in_key, size_t in_klen, int clock,
		       double at, double clock_s)
{
	json_key_lit(j, key, klen);
	json_double(j, at);
	json_key_lit(j, in_key, in_klen);
	if (timer_text_known(clock, clock_s))
		json_double(j, at - clock_s);
	else
		json_null(j);
}

void report_json_timed_awaiting(struct json *j, const struct py_task *t,
				double clock_s)
{
	json_begin_object(j);
	/* (a trio task's: the CancelScope whose deadline it is) */
	json_key_addr(j, "id", t->waiter ? t->waiter : t->timer_scope);
	json_key_string(j, "type", !t->waiter ? "CancelScope" :
			t->waiter_type ? t->waiter_type : "?");
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
