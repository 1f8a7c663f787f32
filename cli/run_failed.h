/*
 * `coroscope run`'s cause for an asyncio task that ended by raising
 * while nothing retrieved its exception (cli/run_failed.c): the work
 * others wait for may never come, and nothing said why.
 */
#ifndef COROSCOPE_CLI_RUN_FAILED_H
#define COROSCOPE_CLI_RUN_FAILED_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* Add c's failed tasks' causes (RUN_CAUSE_FAILED_TASK) to s. */
void run_summarize_failed(struct run_summary *s,
			  const struct collection *c);

#endif
