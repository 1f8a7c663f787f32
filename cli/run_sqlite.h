/*
 * `coroscope run`'s cause for threads waiting for a SQLite database's
 * lock (cli/run_sqlite.c): asleep in SQLite's busy handler, which
 * retries until the connection's timeout, while another connection --
 * of this process or another -- holds the lock.
 */
#ifndef COROSCOPE_CLI_RUN_SQLITE_H
#define COROSCOPE_CLI_RUN_SQLITE_H

#include "cli/collect.h"
#include "cli/run_causes.h"
#include "cli/watch_track.h"

/* Add c's cause of kind RUN_CAUSE_FILE_LOCK for its threads whose facts
 * (s->facts) say they sleep in SQLite, at a line of the program's own;
 * t: the samples' tracker (only threads they saw stuck or retrying at
 * one line), or NULL (none then). */
void run_summarize_sqlite(struct run_summary *s, const struct collection *c,
			  const struct watch_tracker *t);

#endif
