/*
 * A task's timers in words (cli/timer_text.c).  clock is a py_task's
 * sleeps or times_out (readers/tasks.h), clock_s collection.clock_s.
 */
#ifndef COROSCOPE_CLI_TIMER_TEXT_H
#define COROSCOPE_CLI_TIMER_TEXT_H

#include <stddef.h>

struct strbuf;

/* Is the time from the read known for a timer on such a clock? */
int timer_text_known(int clock, double clock_s);
/* A timer in_s seconds from the read (known): is it past due, its loop
 * not run since, rather than about to run it? */
int timer_text_past_due(double in_s);
struct py_task;
/* One timer of alike tasks, added a task at a time (from zeroed): the
 * first's kind of clock and scheduler (trio's sleep is trio.sleep), and
 * the first and last due times; `mixed` once one has none, or one on
 * another kind of clock or scheduler. */
struct timer_span {
	int clock, mixed, trio;
	size_t n;
	double lo, hi;
};
/* One more timer, due at `due`, on clock (0: none, which makes the span
 * mixed); trio: trio's. */
void timer_span_add(struct timer_span *s, int clock, int trio, double due);
/* Task t's sleep, or (timeout) the timeout on its wait. */
void timer_span_task(struct timer_span *s, const struct py_task *t,
		     int timeout);
/* Appended to sb: the span's words, its sleep's (sleep 1) or its
 * timeout's, counted from clock_s where known; 0 (nothing) when it is
 * mixed or has no timer. */
int timer_text_span(struct strbuf *sb, const struct timer_span *s,
		    int sleep, double clock_s);
/* Appended to sb: one task's timer, or the first and last of `count`
 * alike ones' (due from lo to hi: seconds from the read when known,
 * else the loop's times).  ", sleeps in asyncio.sleep, wakes in ...";
 * trio's: ", sleeps in trio.sleep, ...", its own times "trio time"; a
 * thread's ", sleeps in time.sleep". */
void timer_text_sleep(struct strbuf *sb, size_t count, double lo, double hi,
		      int known, int sched);
/* Whose sleep timer_text_sleep() says: asyncio's, trio's, a thread's
 * time.sleep(), a greenlet's gevent.sleep() (watch's, untimed). */
enum { TIMER_ASYNCIO, TIMER_TRIO, TIMER_THREAD, TIMER_GEVENT };
/* "asyncio.sleep", "trio.sleep", "time.sleep", "gevent.sleep". */
const char *timer_text_sleep_name(int sched);
/* ", times out in ..." (trio: on a clock of its own, "trio time") */
void timer_text_timeout(struct strbuf *sb, size_t count, double lo,
			double hi, int known, int trio);

/*
 * Appended to sb: the sleep and the timeout of tasks[0..n) (alike ones,
 * as a span each), in words counted from clock_s; or, without times
 * (for the key that makes them alike), only which timers they have, on
 * which kind of clock, and whether a sleep is past due, so that alike
 * tasks stay alike as their times differ.
 */
void timer_text_tasks(struct strbuf *sb, const struct py_task *const *tasks,
		      size_t n, double clock_s, int times);

#endif
