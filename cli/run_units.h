/*
 * What `run`'s causes say of one thread, task or greenlet node of the
 * wait-for graph, and of a cause's waiters (cli/run_units.c).  t: what
 * the samples saw (cli/run_sample.h), or NULL.
 */
#ifndef COROSCOPE_CLI_RUN_UNITS_H
#define COROSCOPE_CLI_RUN_UNITS_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/run_seen.h"

struct watch_tracker;
struct strbuf;

/* What the samples saw of a thread, task or greenlet node (nothing of
 * an object's). */
void run_node_seen(const struct collection *c, const struct watch_tracker *t,
		   size_t node, struct run_seen *out);
/* A detail line of cause: the node's label, where it is, how long it
 * has been stuck, a task's timers and its awaiters, a thread's source
 * line (facts: per thread of the snapshot, or NULL), an object's
 * waiters.  sb is scratch. */
void run_unit_detail(struct run_cause *cause, const struct collection *c,
		     const struct watch_tracker *t, size_t node,
		     const struct run_thread_facts *facts, struct strbuf *sb);
/* A detail line of cause for each of waiter nodes w[0..nw); three or
 * more alike (at the same place and stuck as long) share one unless
 * s->apart. */
void run_unit_waiters(struct run_cause *cause, const struct collection *c,
		      const struct watch_tracker *t, const size_t *w,
		      size_t nw, const struct run_summary *s,
		      struct strbuf *sb);

/* A thread that waits for a cause's waiter to finish: `unit` waits on
 * future node `fut` (a concurrent future whose job `via` runs, or the
 * Thread `via` runs as, being joined). */
struct run_behind {
	size_t unit, fut, via;
};
/* The threads behind waiter nodes w[0..nw) through such waits, and
 * behind those in turn, nearest first: the first max into out; how many
 * in all.
 * (A task waiting so has a cause of its own, which names the thread.) */
size_t run_units_behind(const struct collection *c, const size_t *w,
			size_t nw, struct run_behind *out, size_t max);

#endif
