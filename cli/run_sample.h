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
 *	                                   start of the window, leaving
 *	                                   the target to itself for
 *	                                   RUN_SAMPLE_RUN_PER_PAUSE times
 *	                                   s.pause_ms after each
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
#include "cli/run_seen.h"
#include "cli/watch_track.h"

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
	double last_ms;            /* the latest sample of all */
	size_t ticks;
	double pause_ms;           /* the last tick's longest stop */
};

/*
 * A process stopped for the samples' sake must run for at least this
 * many times as long as it was stopped before the next sample: on a
 * loaded machine a stop can last a second, and sampling must not stall
 * the program it watches (nor slow a start-up into a false hang).
 */
#define RUN_SAMPLE_RUN_PER_PAUSE 4

void run_sampler_init(struct run_sampler *s, long long window_ms);
void run_sampler_release(struct run_sampler *s);

/* Has sampling started (a tick was taken)? */
int run_sampler_started(const struct run_sampler *s);

/* How long the samples span, first to last, up to the window: less when
 * the dump came early (SIGUSR1 during the window), or the tree began
 * late in it. */
double run_sampler_span_s(const struct run_sampler *s);

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
/* How long what made no progress was watched to be stuck: half the
 * window. */
double run_sampler_stuck_s(const struct run_sampler *s);
const struct watch_tracker *run_sampler_tracker(const struct run_sampler *s,
						int pid);

#endif
