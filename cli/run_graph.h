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

void run_summarize_graph(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t);
/* Into out (initialized here): the addresses of c's tasks that
 * run_summarize_graph() will name, t the same samples (NULL: none): the
 * waiters and the holders it names of each object it makes a cause of
 * (a lock, event, queue..., a server's idle state; not a gather or
 * concurrent future, which is no cause of its own), and the tasks of
 * lock cycles.  Its causes say more of them than a "stuck task" cause
 * would (struct run_summary's explained). */
void run_graph_explained(const struct collection *c,
			 const struct watch_tracker *t, struct addrmap *out);

#endif
