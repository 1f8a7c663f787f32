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

#endif
