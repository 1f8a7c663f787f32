/*
 * Printing what the readers found: the human-readable report and the
 * JSON document (schema 1, see man/coroscope.1).  Shared by the commands
 * that produce a dump (live process now, core files later).
 */
#ifndef COROSCOPE_CLI_REPORT_H
#define COROSCOPE_CLI_REPORT_H

#include <stdio.h>

#include "attach/memsrc.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"

struct report {
	int pid;
	const char *command;          /* the target's command line, or NULL */
	const struct pyproc *py;
	const struct py_snapshot *snap;
	int locals;                   /* --locals was given */
	double pause_ms, wall_ms;
	const struct memsrc_stats *stats;
};

void report_text(FILE *out, const struct report *r);
void report_json(FILE *out, const struct report *r);

#endif
