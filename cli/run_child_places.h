/*
 * `coroscope run`: where the child processes a parent waits for are,
 * under the parent's cause (cli/run_child_places.c).
 */
#ifndef COROSCOPE_CLI_RUN_CHILD_PLACES_H
#define COROSCOPE_CLI_RUN_CHILD_PLACES_H

#include <stddef.h>

#include "cli/run_causes.h"
#include "readers/waitgraph.h"

struct strbuf;

/* "child process 1235: thread 1235 "MainThread" at app.py:8 in
 * <module>": where each child process among graph node and sib[0..n)
 * is (its main thread's own innermost frame), for those `run` dumped
 * that run no pool job, four at most: a parent waiting for a child
 * (subprocess.run()) is held up by what holds up the child, whose own
 * causes come after the parent's.  Not for a pool's workers
 * (run_add_pool_idle()).  1 when one was added. */
int run_add_child_places(struct run_cause *cause, const struct run_summary *s,
			 const struct py_waitgraph *g, size_t node,
			 const size_t *sib, size_t n, struct strbuf *sb);

#endif
