/*
 * Following tasks and threads across samples and judging whether each
 * made progress: the clock a single dump does not have.
 *
 * The tracker works on plain data, so it knows nothing of the readers:
 * the caller reduces each task or thread of a sample to a struct
 * watch_obs (an identity, a fingerprint of everything that changes when
 * it moves, and for threads what the kernel accounted to it since the
 * previous sample) and the tracker keeps, per identity, when it last
 * moved.  `coroscope watch` feeds it every interval; `coroscope run` can
 * feed it during the last part of its timeout (see watch_tracker_init).
 *
 * Use:
 *	watch_tracker_init(&t, stuck_s);
 *	for each sample:
 *		watch_begin(&t, now_s);
 *		watch_observe(&t, &obs) for every task, thread,
 *			generator and greenlet;
 *		watch_end(&t);   then read t.events[0 .. t.nevents)
 *	watch_stuck_for(&t, item) at any time; watch_tracker_release(&t).
 *
 * Progress: a task, generator or greenlet moved when its fingerprint
 * changed (the caller hashes the awaited object and the coroutine chain:
 * coroutine and frame addresses and lines, and for generators, greenlets
 * and trio tasks the values of their locals), when the caller says it
 * woke (obs.woke), or when it disappeared (finished).  A thread moved when its fingerprint (its
 * frames) changed, or when the kernel says it ran (watch_thread_ran()):
 * a thread spinning at one line is busy, never stuck.
 */
#ifndef COROSCOPE_CLI_WATCH_TRACK_H
#define COROSCOPE_CLI_WATCH_TRACK_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"

enum watch_kind {
	WATCH_TASK,        /* asyncio or trio task (obs.label "trio") */
	WATCH_THREAD,
	WATCH_GENERATOR,   /* generator, coroutine or async generator that
			      no task owns (obs.label: its kind) */
	WATCH_GREENLET,
};
#define WATCH_NKINDS 4

enum watch_state {
	WATCH_ACTIVE,   /* moved within the stuck threshold */
	WATCH_STUCK,    /* no progress for at least the threshold */
	WATCH_BUSY,     /* a thread using at least WATCH_BUSY_SHARE of a CPU */
	WATCH_GONE,     /* finished, or no longer seen */
	WATCH_IDLE,     /* a thread waiting for work by design (obs.idle),
			   a task asleep in asyncio.sleep(): never called
			   stuck */
};

/* A thread that used this share of one CPU over the watch is "busy":
 * well above a thread that wakes now and then (an event loop's is about
 * 0.01).  So is one that used or waited for a CPU (on the run queue) at
 * least WATCH_BUSY_DEMAND of the time: a spinning thread on a crowded
 * machine may get only a few percent, but it always wants one. */
#define WATCH_BUSY_SHARE 0.05
#define WATCH_BUSY_DEMAND 0.5

/* A place in the target's code; strings borrowed in an observation,
 * owned by the tracker in an item. */
struct watch_place {
	const char *file;      /* NULL when unknown */
	const char *function;
	int line;              /* -1 when unknown */
};

/* One of a task's asyncio timers (readers/tasks.h), when `on`: due at
 * `due` in its loop's time when `timed` (read off the loop's timer),
 * `in_s` seconds from the sample when `known` (cli/timer_text.h).  A
 * sleep whose timer was not read (uvloop's, in C) is on, not timed.  A
 * thread's `due` may be off by up to `slack` seconds either way (struct
 * thread_deadline). */
struct watch_timer {
	int on, timed, known;
	double due, in_s, slack;
};

struct watch_obs {
	enum watch_kind kind;
	uint64_t id;               /* task address, or kernel thread id; != 0 */
	const char *name;          /* task or thread name, may be NULL */
	uint64_t fingerprint;      /* changes whenever the object moves */
	/* Greenlets: its frames' code and lines alone (0: not kept): a
	 * greenlet whose locals change at one line polls there */
	uint64_t places;
	/* Threads: the asyncio task whose step runs on it, 0 when none,
	 * and a mark of how far its loop had run (readers/loop_turns.h;
	 * 0 unknown): where either differs from the last sample's, the
	 * step is another. */
	uint64_t step, step_mark;
	int woke;                  /* the caller knows it moved anyway */
	/* Tasks: a task it awaits moved on its own since the sample
	 * before (cli/watch_awaits.h): it waits, so it moved too, but not
	 * on its own (no awaiter of it moves for that, which in an await
	 * cycle would go on for ever) */
	int awaited_moved;
	/* Threads: the kernel's accounting over window_s seconds since the
	 * previous sample, not counting coroscope's own stop; negative
	 * when unknown. */
	double cpu_s;
	double wait_s;             /* runnable but waiting for a CPU */
	long sleeps;               /* times it went to sleep of its own
				      doing (struct watch_window) */
	double window_s;
	struct watch_place where;  /* the first frame of the user's code */
	struct watch_place inner;  /* the innermost frame (file NULL: same) */
	const char *waits_on;      /* what it awaits, or NULL */
	/* Who holds that, as the wait-for graph says ("task 'holder'",
	 * raw), or NULL. */
	const char *held_by;
	/* What kind of task, generator or greenlet: "trio" for a trio
	 * task, "coroutine" ... for a generator, the class for a greenlet;
	 * NULL for an asyncio task and a thread. */
	const char *label;
	/* Threads, with native frames: what it is blocked in, one word
	 * (native_blocked_in()), and the innermost native function; NULL
	 * when not read. */
	const char *blocked_in;
	const char *native_function;
	/* What it is when, at this sample, it waits by design: a thread
	 * for work ("an executor's worker thread", cli/thread_idle.h), a
	 * scheduler's own task or generator ("trio's system task",
	 * cli/sched_idle.h), a task asleep in asyncio.sleep() whose timer
	 * is not past due; NULL when not. */
	const char *idle;
	/* At the first sample (read before any stop of ours,
	 * attach/offcpu.h): how long a thread had been off its CPU, or for
	 * anything else how long the threads that could run it had all
	 * been; it counts as time without progress already, in whole
	 * seconds; < 0 unknown. */
	double off_cpu_s;
	int not_started;           /* a greenlet that has not run yet */
	int cancelled;             /* an asyncio task with a cancel requested
				      (py_task.cancels_requested) */
	/* A task's, at this sample: asleep in asyncio.sleep(), and the
	 * timeout its wait is under. */
	struct watch_timer sleep, timeout;
};

struct watch_item {
	enum watch_kind kind;
	uint64_t id;
	char *name;
	uint64_t fingerprint;
	double first_seen, last_seen;  /* sample times, seconds */
	double last_progress;          /* when it was last seen moving */
	double own_progress;           /* ...on its own: not only because
					  a task it awaits moved */
	double same_since;             /* since when its fingerprint (its
					  stack, its lines) is the same,
					  whether it ran or not: a loop that
					  polls, asleep at one line */
	uint64_t places;               /* as in watch_obs, and since when */
	double places_since;           /* they are the same */
	/* Its fingerprint at its first sample, the times it changed since
	 * and the samples that saw it: a loop polling at one line, seen
	 * once at its check's, is back where it was. */
	uint64_t first_fingerprint;
	int changes, nseen, nfirst;    /* nfirst: samples at the first */
	uint64_t step, step_mark;      /* a thread's running task, and its
					  loop's mark (as in watch_obs) */
	double step_same_since;        /* the same task's step since */
	int gone;
	int reported;                  /* a "stuck" event was emitted */
	double cpu_s, window_s;        /* totals over the watch (threads) */
	double wait_s, wait_window_s;  /* run-queue wait, where known */
	char *where_file, *where_function;
	int where_line;
	char *inner_file, *inner_function;
	int inner_line;
	char *waits_on, *held_by;
	int seen;                      /* observed in the current sample */
	int carried;                   /* not seen, but its kind was not
					  read in this sample: not gone */
	char *label;                   /* as in watch_obs */
	char *blocked_in, *native_function;
	char *idle;                    /* as in watch_obs, at the last sample */
	int not_started;               /* as in watch_obs */
	/* The first sample of those since that saw it cancelled (as in
	 * watch_obs), 0 when the last did not: cancelled that long at
	 * least, and pending (cli/run_cancelled.h) */
	double cancelled_since;
	struct watch_timer sleep, timeout;  /* as in watch_obs, at the last
					       sample */
	/* A thread's last sleep whose end was read, kept through samples
	 * that read none (one due within 0.1 s is not read) */
	struct watch_timer slept;
	/* ... and its last timed wait's, kept alike; the times such a
	 * wait ran out and another began at the same place (a poll, `while
	 * not ev.wait(0.5)`: it times out and waits again), since it came
	 * there.  Not progress (slept_again() says why): words.  (One that
	 * ended early is: woken_early().) */
	struct watch_timer waited;
	int timed_again;
	/* A stuck thread's wait as the kernel has it ("blocked reading fd
	 * 7, a TCP connection ... (established)"; raw names, escaped by
	 * the writer), set by the caller once its STUCK event is out
	 * (watch_set_blocked_on()), dropped when it moves; else NULL. */
	char *blocked_on;
};

enum watch_event_kind {
	WATCH_EV_STUCK,   /* crossed the threshold */
	WATCH_EV_MOVED,   /* moved again after a STUCK event */
	WATCH_EV_GONE,    /* disappeared after a STUCK event */
};

struct watch_event {
	enum watch_event_kind kind;
	size_t item;           /* index into items */
	double stuck_for;      /* seconds without progress until the event */
	int at_least;          /* ...or more: watch_stuck_at_least() */
};

struct watch_tracker {
	double stuck_s;        /* the threshold */
	double now;            /* time of the current sample */
	double prev;           /* time of the one before, 0 at the first */
	double first;          /* time of the first sample */
	size_t samples;
	struct watch_item *items;
	size_t nitems, alloc;
	struct addrmap index[WATCH_NKINDS];  /* by kind: id -> index + 1 */
	struct watch_event *events;  /* the last watch_end()'s */
	size_t nevents, events_alloc;
};

/* stuck_s: seconds without progress before an item counts as stuck
 * (`run` would pass the part of its timeout it samples, or less). */
void watch_tracker_init(struct watch_tracker *t, double stuck_s);
void watch_tracker_release(struct watch_tracker *t);

/* Start a sample taken at now_s (seconds, any monotonic origin). */
void watch_begin(struct watch_tracker *t, double now_s);
void watch_observe(struct watch_tracker *t, const struct watch_obs *o);
/* This sample did not read the items of this kind (and label, NULL
 * any): those it did not see keep their state, neither gone nor moved
 * (greenlets or trio tasks whose reading failed while the rest read). */
void watch_carry(struct watch_tracker *t, enum watch_kind kind,
		 const char *label);
/* Mark what this sample did not see (nor carried) as gone, compute the
 * events. */
void watch_end(struct watch_tracker *t);

/* Item i's blocked_on becomes a copy of text. */
void watch_set_blocked_on(struct watch_tracker *t, size_t i,
			  const char *text);

/* Did the kernel run this thread in the window (beyond noise)? */
int watch_thread_ran(double cpu_s, long sleeps);
/* A generator or greenlet: named by its address in lines, and a group
 * of them by their shared name and the members' addresses. */
int watch_by_address(const struct watch_item *it);
/* What a line calls the item's kind before "task", "tasks", "greenlet"
 * or "greenlets": a task's framework ("trio"; NULL for asyncio), an
 * unnamed greenlet's type ("Hub"; NULL for a plain greenlet or a named
 * one, whose name says more); NULL for anything else. */
const char *watch_kind_label(const struct watch_item *it);
/* "tasks", "threads"...: the summary's headings and JSON keys. */
const char *watch_kind_plural(enum watch_kind kind);

double watch_stuck_for(const struct watch_tracker *t,
		       const struct watch_item *it);
/* Has it not moved since before the watch's first sample (there then,
 * never seen moving since)?  Its stuck_for is then a floor: it may
 * have sat there long before the watch began. */
int watch_stuck_at_least(const struct watch_tracker *t,
			 const struct watch_item *it);
/* CPU share of one CPU over the watch, 0..1 (threads; 0 for tasks). */
double watch_busy(const struct watch_item *it);
/* Share of the watch spent on a CPU or waiting for one, 0..1, or -1
 * when the kernel does not say. */
double watch_demand(const struct watch_item *it);
/* Its state: idle when the last sample saw it wait for work by design
 * (watch_obs.idle; asleep, only where it would be stuck), else
 * watch_progress_of(). */
enum watch_state watch_state_of(const struct watch_tracker *t,
				const struct watch_item *it);
/* Stuck, busy, active or gone by its progress alone, idle or not (`run`
 * says of an idle thread what it is apart from its state).  Busy only
 * while it runs: seen moving at the current sample or the one before. */
enum watch_state watch_progress_of(const struct watch_tracker *t,
				   const struct watch_item *it);
const char *watch_state_name(enum watch_state s);

/* The item for (kind, id), or NULL. */
const struct watch_item *watch_find(const struct watch_tracker *t,
				    enum watch_kind kind, uint64_t id);

/* Item indexes into order (room for t->nitems), longest stuck first,
 * then busiest, idle threads next to last, gone last.  Returns
 * t->nitems. */
size_t watch_sorted(const struct watch_tracker *t, size_t *order);

#endif
