/*
 * `coroscope run`'s idle cause for a thread in socketserver's
 * serve_forever() or a task in asyncio's (cli/run_serves.c): a server
 * nobody shut down.
 */
#ifndef COROSCOPE_CLI_RUN_SERVES_H
#define COROSCOPE_CLI_RUN_SERVES_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"

/* Add c's serving threads' causes (RUN_CAUSE_IDLE) to s, and its
 * tasks' in asyncio's Server.serve_forever(); t: the samples' tracker,
 * or NULL.  Reads the servers' sockets from c's copy. */
void run_summarize_serves(struct run_summary *s, struct collection *c,
			  const struct watch_tracker *t);

/* The coroutine of task t in asyncio's Server.serve_forever(), its
 * innermost, or NULL: a task serving by design, no stuck task. */
const struct py_gen *run_task_serving_forever(const struct py_async *a,
					      const struct py_task *t);

#endif
