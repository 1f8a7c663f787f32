/*
 * `coroscope run`: an asyncio task with a cancel requested (its count of
 * cancel() calls less uncancel()'s, 3.11 on) that goes on: stuck, or
 * cancelled at every sample for the stuck threshold.  It caught the
 * CancelledError and carried on (`except CancelledError: pass` in a
 * loop), or its cleanup waits; whatever awaits it (an `await task`
 * after `task.cancel()`, a TaskGroup's exit, a timeout's) waits for
 * ever.  A group's owner in its exit, cancelled by the group, waits for
 * such a child: not it.
 */
#ifndef COROSCOPE_CLI_RUN_CANCELLED_H
#define COROSCOPE_CLI_RUN_CANCELLED_H

#include "cli/collect.h"
#include "cli/run_causes.h"

struct watch_tracker;

/* Causes looked at, at most; the last says how many more. */
#define RUN_CANCELLED_NAMED 4

/* A cause (RUN_CAUSE_CANCELLED) for each such task of c, as the samples
 * t saw it: "task 'w' goes on though cancelled (1 cancel request
 * outstanding, for at least 2.5s): ...", and where it is. */
void run_summarize_cancelled(struct run_summary *s,
			     const struct collection *c,
			     const struct watch_tracker *t);

#endif
