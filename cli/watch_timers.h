/*
 * A task's asyncio or trio timers, and a thread's sleep or timed wait,
 * in `watch` (cli/watch_timers.c).
 */
#ifndef COROSCOPE_CLI_WATCH_TIMERS_H
#define COROSCOPE_CLI_WATCH_TIMERS_H

#include <stddef.h>

#include "cli/watch_track.h"
#include "readers/tasks.h"

struct json;
struct strbuf;

/* Into o: the task's timers at this sample, clock_s its collection's
 * (collection.clock_s), inner its innermost coroutine; a task asleep
 * and not past due idle, its sleep standing for what it waits on
 * (o->waits_on dropped). */
void watch_task_timers(struct watch_obs *o, const struct py_task *task,
		       const struct py_gen *inner, double clock_s);
/* Into o: a greenlet asleep in gevent.sleep() (inner its innermost
 * frame, NULL for none): idle, as a task in asyncio.sleep(), its sleep
 * standing for what it waits on; when it wakes is libev's timer's, not
 * read. */
void watch_greenlet_timers(struct watch_obs *o, const struct py_frame *inner);
struct thread_deadline;
/* Into o: when the thread's sleep or timed wait ends (d from
 * cli/collect_deadlines.h, NULL for none); it stays what its progress
 * says (a thread asleep in a test is no loop's periodic job). */
void watch_thread_timers(struct watch_obs *o, const struct thread_deadline *d,
			 double clock_s);
/* Appended to sb: ", sleeps in asyncio.sleep, wakes in 12.0s", ",
 * times out in 3.0s" of items idx[m[0..n)], the first and last of their
 * times; without times (an event, a line's key) only whether they
 * sleep, and on which kind of clock. */
void watch_add_timers(struct strbuf *sb, const struct watch_item *items,
		      const size_t *idx, const size_t *m, size_t n, int times);
/* The task's members "sleep_until", "wakes_in_s", "timeout_at",
 * "times_out_in_s". */
void watch_json_timers(struct json *j, const struct watch_item *it);

#endif
