/*
 * `coroscope run` watching its command in the last part of the timeout
 * (--sample-last), with the same sampling as `coroscope watch`
 * (cli/watch_sample.h, cli/watch_track.h): one tracker per Python
 * process of the tree, so that the hang report says how long each task
 * and thread made no progress, and which threads were busy, instead of
 * guessing from a single dump.
 *
 * Use:
 *	run_sampler_init(&s, window_ms);
 *	run_sampler_tick(&s, &tree);       every s.interval_ms from the
 *	                                   start of the window
 *	for the dump at the timeout, per process:
 *		p = run_sampler_begin(&s, &entry);  collect_live(&c, pid, ...);
 *		run_sampler_end(&s, p, &c or NULL);
 *	run_sampler_tracker(&s, pid) while reporting; run_sampler_release().
 */
#ifndef COROSCOPE_CLI_RUN_SAMPLE_H
#define COROSCOPE_CLI_RUN_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/collect.h"
#include "cli/run_tree.h"
#include "cli/watch_sample.h"
#include "cli/watch_track.h"

struct strbuf;

/* One process of the tree, followed across samples. */
struct run_sampled {
	int pid;
	unsigned long long start;  /* tells a reused pid apart */
	char skip_exe[256];        /* not Python while running this
				      program: not sampled again */
	struct watch_tracker t;
	struct watch_cpu cpu[2];   /* kernel accounting, before and now */
	int before;                /* cpu[before]: read after the last sample */
};

struct run_sampler {
	struct run_sampled *v;
	size_t n, alloc;
	double window_s;           /* --sample-last */
	double interval_ms;        /* between ticks */
	double start_ms;           /* the first tick; 0 before it */
	double first_ms;           /* the latest sample of the first tick */
	size_t ticks;
};

void run_sampler_init(struct run_sampler *s, long long window_ms);
void run_sampler_release(struct run_sampler *s);

/* Has sampling started (a tick was taken)? */
int run_sampler_started(const struct run_sampler *s);

/* One sample of every process of tree (not stopping those that are
 * not Python more than once). */
void run_sampler_tick(struct run_sampler *s, const struct proc_list *tree);

/*
 * Around a collection taken elsewhere (the dump at the timeout), so that
 * it is the last sample: begin just before collect_live() (NULL when
 * sampling has not started), end just after, with the collection, or
 * NULL when it failed.
 */
struct run_sampled *run_sampler_begin(struct run_sampler *s,
				      const struct proc_entry *e);
void run_sampler_end(struct run_sampler *s, struct run_sampled *p,
		     struct collection *c);

/* The tracker of pid, or NULL when it was not sampled. */
const struct watch_tracker *run_sampler_tracker(const struct run_sampler *s,
						int pid);

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
};

/* t may be NULL (then RUN_SEEN_UNKNOWN). */
void run_seen_task(const struct watch_tracker *t, uint64_t addr,
		   struct run_seen *out);
void run_seen_thread(const struct watch_tracker *t, const struct py_thread *th,
		     struct run_seen *out);
void run_seen_item(const struct watch_tracker *t, const struct watch_item *it,
		   struct run_seen *out);

/* "stuck for at least 4.0s", "stuck for 2.5s" or "busy, 97% of a CPU";
 * nothing for the other states.  Returns whether it added anything. */
int run_seen_add(struct strbuf *sb, const struct run_seen *seen);

/*
 * One line for a stuck or busy item of a tracker: 'task "name" stuck for
 * at least 4.0s at FILE:LINE in FUNC (innermost FILE:LINE in FUNC),
 * waits on Event'.  Returns 0 (adding nothing) for the other states.
 */
int run_seen_describe(struct strbuf *sb, const struct watch_tracker *t,
		      const struct watch_item *it);

#endif
