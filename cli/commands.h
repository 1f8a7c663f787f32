/*
 * The coroscope subcommands.  Each returns the process exit status
 * (enum cs_status), having printed its output and any error itself.
 */
#ifndef COROSCOPE_CLI_COMMANDS_H
#define COROSCOPE_CLI_COMMANDS_H

#include <stdio.h>

#include "common/error.h"

#define COROSCOPE_VERSION "0.1.0"

int cmd_dump(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_core(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/* The documented exit status of an error code (enum cs_status or
 * cs_cause): the one table from codes to statuses. */
int cli_exit_status(int code);
/* Print "coroscope: <msg>" on stderr and return its exit status. */
int cli_report_error(const struct cs_err *err);
/* After a report to out: 0, or CS_ERR_INTERNAL and "cannot write
 * output" in err when a write failed.  write_errno is errno as the
 * report left it, taken before anything else could change it. */
int cli_output_written(FILE *out, int write_errno, struct cs_err *err);
/* Print a usage error and return CS_ERR_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void cli_usage(FILE *out);

/* A positive process id: 0, or -1 when s is not one. */
int cli_parse_pid(const char *s, int *pid);

#endif
