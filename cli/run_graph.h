/*
 * `coroscope run` causes read off the wait-for graph: cycles through
 * locks, then each object others wait on with its holder (those with
 * the most threads and tasks blocked behind them, directly or through
 * chains of waits, first), each at the user's own line; waits that are
 * a server's idle state last, labelled idle.  t: what sampling saw of
 * the process (cli/run_sample.h), or NULL: with it, an object whose
 * waiters were all seen making progress (a queue being fed) is no
 * cause, and each waiter says how long it has been stuck.
 */
#ifndef COROSCOPE_CLI_RUN_GRAPH_H
#define COROSCOPE_CLI_RUN_GRAPH_H

#include "cli/collect.h"
#include "cli/run_causes.h"

struct watch_tracker;
struct addrmap;

/* The graph's causes: lock cycles, and each object waited on with its
 * holders and waiters.  Into named (NULL: not wanted) the addresses of
 * the tasks they name, as waiter, holder or cycle member: their causes
 * say more of them than a "stuck task" cause would (struct
 * run_summary's explained). */
void run_summarize_graph(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t, struct addrmap *named);

#endif
