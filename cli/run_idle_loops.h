/*
 * `coroscope run`'s idle cause for a thread running an asyncio event
 * loop with nothing left to do (cli/run_idle_loops.c): run_forever()
 * that nothing will stop; and its cause for a loop asleep with
 * callbacks ready that a thread scheduled without waking it.
 */
#ifndef COROSCOPE_CLI_RUN_IDLE_LOOPS_H
#define COROSCOPE_CLI_RUN_IDLE_LOOPS_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"

/* Add c's idle loops' causes (RUN_CAUSE_IDLE) and asleep loops' (RUN_
 * CAUSE_LOOP_BLOCKED) to s; t: the samples' tracker, or NULL.  Reads
 * each loop from c's copy. */
void run_summarize_idle_loops(struct run_summary *s, struct collection *c,
			      const struct watch_tracker *t);

#endif
