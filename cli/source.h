/*
 * Source lines under frames in the text report, as a Python traceback
 * shows them: the target's files, read through its root
 * (memsrc_target_path: /proc/PID/root, or --sysroot for a core), and only
 * files the target's own user could read (a dump's output ends up in CI
 * logs: a root-only file the target merely imported must not).  Each file
 * is read once, at most SOURCE_MAX_FILE bytes; lines are cut at
 * SOURCE_MAX_LINE bytes.  The text is the target's: callers escape it.
 */
#ifndef COROSCOPE_CLI_SOURCE_H
#define COROSCOPE_CLI_SOURCE_H

#include <stddef.h>
#include <stdio.h>

#include "attach/memsrc.h"

#define SOURCE_MAX_FILE (4u << 20)   /* larger files are not shown */
#define SOURCE_MAX_LINE 200          /* bytes of a line shown */
#define SOURCE_MAX_FILES 4096        /* distinct files looked at */

struct source_cache;

/* A core's process's user, from the core (a live process's is read
 * from /proc): known only where the caller trusts it (cli/cmd_core.c). */
struct source_user {
	int known;
	long uid, gid;
};

/* For the process behind ms (live: its uid and groups from
 * /proc/PID/status; a core: core_user's uid and gid, when known; one
 * whose user is not known: only files all may read, in directories all
 * may search).  A file changed after the process started (live), or
 * after core_time (a core: when it was written, seconds since the
 * epoch; 0 unknown), is not the code it ran: its lines are not shown
 * (source_cache_stale()). */
struct source_cache *source_cache_new(const struct memsrc *ms, int live_pid,
				      const struct source_user *core_user,
				      double core_time);
void source_cache_free(struct source_cache *sc);

/* When files were not shown as changed since: "coroscope: warning: 2
 * source files changed after the core was written (app.py, ...): their
 * lines are not shown" (live: "after the process started"). */
void source_warn_stale(FILE *out, const struct source_cache *sc, int live);

/*
 * Line `line` (1-based) of the target's file `filename`, without its
 * leading blanks and its newline, NUL-terminated, at most SOURCE_MAX_LINE
 * bytes (*cut set when it was longer); NULL when it cannot or must not be
 * shown.  Valid until source_cache_free().
 */
const char *source_line(struct source_cache *sc, const char *filename,
			int line, int *cut);

#endif
