/*
 * `coroscope run`'s causes for threads blocked writing to a pipe that
 * their own process or its parent holds the read end of
 * (cli/run_writes.c).
 */
#ifndef COROSCOPE_CLI_RUN_WRITES_H
#define COROSCOPE_CLI_RUN_WRITES_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* Add c's causes of kind RUN_CAUSE_WRITE to s. */
void run_summarize_writes(struct run_summary *s, const struct collection *c);

#endif
