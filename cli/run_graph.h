/*
 * `coroscope run` causes read off the wait-for graph: cycles through
 * locks, then each object others wait on with its holder (most waiters
 * first), each at the user's own line; waits that are a server's idle
 * state last, labelled idle.
 */
#ifndef COROSCOPE_CLI_RUN_GRAPH_H
#define COROSCOPE_CLI_RUN_GRAPH_H

#include "cli/collect.h"
#include "cli/run_causes.h"

void run_summarize_graph(struct run_summary *s, const struct collection *c);

#endif
