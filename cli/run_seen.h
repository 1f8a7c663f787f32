/*
 * What the samples `coroscope run` took before its dump (cli/run_sample.h)
 * say of one task or thread, read off watch's tracker
 * (cli/watch_track.h): stuck and for how long, busy, or moving.  Plain
 * data, apart from the sampling, so that the cause analysis
 * (cli/run_causes.c) can use it and be tested without a process.
 */
#ifndef COROSCOPE_CLI_RUN_SEEN_H
#define COROSCOPE_CLI_RUN_SEEN_H

#include <stdint.h>

#include "cli/watch_track.h"
#include "readers/stacks.h"

struct strbuf;

/* What the samples say of one task or thread. */
enum run_seen_state {
	RUN_SEEN_UNKNOWN,   /* not sampled (or seen once only) */
	RUN_SEEN_MOVING,    /* made progress lately: not stuck */
	RUN_SEEN_STUCK,     /* no progress for stuck_for seconds */
	RUN_SEEN_BUSY,      /* a thread using a CPU */
};

struct run_seen {
	enum run_seen_state state;
	double stuck_for;   /* seconds without progress */
	int at_least;       /* never seen moving: stuck at least that long */
	double busy;        /* threads: share of one CPU, 0..1 */
	/* Its stack (its lines) the same at every sample, for same_for
	 * seconds, whether it ran or not (a loop polling at one line is
	 * MOVING, and this). */
	int same_all;
	double same_for;
	/* Threads: not so from the first sample, but the same since one,
	 * for the stuck threshold or more (a loop that began polling during
	 * the samples: its sleep's ends say it woke, so it is no longer
	 * stuck; watch_track.c's slept_again()) */
	int same_late;
	/* Threads: at one place at every sample but one (`away`, the
	 * samples elsewhere: a poll seen once at its check's line), of five
	 * at least, watched for watched_for seconds.  (Not two: a task
	 * alternating between two lines, going back to its loop between,
	 * is at one of them at all samples but two one time in ten.) */
	int all_but_one, away;
	double watched_for;
	/* A thread started during the samples, watched for less than the
	 * stuck threshold: at one place is no poll yet */
	int young;
	/* Threads: the times its timed wait ran out and it waited again
	 * at that place (struct watch_item) */
	int timed_again;
	/* Tasks: seen with a cancel requested at every sample since
	 * cancelled_for seconds (0: not at the last), since the first
	 * (cancelled_at_least: that long at least) */
	double cancelled_for;
	int cancelled_at_least;
	/* Threads: the asyncio task whose step ran on it at the last
	 * sample (0: none), running at every sample since step_for
	 * seconds. */
	uint64_t step;
	double step_for;
	/* ... and its loop's mark was read (readers/loop_turns.h): the
	 * loop ran no callback in those step_for seconds */
	int step_marked;
};

/*
 * Seen in one place at every sample, whether it ran between or not: at
 * one line, or (a thread) at every sample but once (all_but_one), as a
 * loop that polls is at its sleep's line and, now and then, at its
 * check's; or at one line since a sample, for the stuck threshold at
 * least (same_late).  The seconds it has been, or 0 when not (or when
 * young); and the place in words, "at that line at every sample",
 * "... but one", "... since it came there".
 */
double run_seen_same_for(const struct run_seen *seen);
const char *run_seen_same_place(const struct run_seen *seen);

/* t may be NULL (then RUN_SEEN_UNKNOWN). */
void run_seen_task(const struct watch_tracker *t, uint64_t addr,
		   struct run_seen *out);
void run_seen_thread(const struct watch_tracker *t, const struct py_thread *th,
		     struct run_seen *out);
void run_seen_item(const struct watch_tracker *t, const struct watch_item *it,
		   struct run_seen *out);

/* ", then waits again (seen 3 times)" after a thread's timeout, when
 * its timed wait ran out and began again (a poll); nothing else. */
void run_seen_add_timed_again(struct strbuf *sb, const struct run_seen *seen);

/* "stuck for at least 4.0s", "stuck for 2.5s" or "busy, 97% of a CPU";
 * nothing for the other states.  Returns whether it added anything. */
int run_seen_add(struct strbuf *sb, const struct run_seen *seen);

/*
 * One line for a stuck or busy item of a tracker: 'task "name" stuck for
 * at least 4.0s at FILE:LINE in FUNC (innermost FILE:LINE in FUNC),
 * waits on Event'.  Returns 0 (adding nothing) for the other states.
 * It is the item's subject ('task "name"', 'thread 12 "name"') and what
 * was seen of it (the rest), which run_seen_what() alone adds, for
 * alike items to share (cli/alike_lines.h).
 */
/* with_addr: a task named with its address too (another listed has its
 * name). */
int run_seen_describe(struct strbuf *sb, const struct watch_tracker *t,
		      const struct watch_item *it, int with_addr);
int run_seen_what(struct strbuf *sb, const struct watch_tracker *t,
		  const struct watch_item *it);

#endif
