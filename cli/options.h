/*
 * The options every command that shows a process shares (dump, core):
 * --json, --locals, --format, --no-source, --all, --max-items, --help,
 * parsed in one place, with each
 * command's own options (dump's --no-block, core's --sysroot...) handed
 * to the command.
 */
#ifndef COROSCOPE_CLI_OPTIONS_H
#define COROSCOPE_CLI_OPTIONS_H

#include <getopt.h>

#include "cli/collect.h"
#include "cli/report.h"

struct view_options {
	enum report_format format;
	struct collect_options collect;
};

/* Ids of long options without a letter: a command's own count up from
 * CLI_OPT_OWN_FIRST, the shared ones from CLI_OPT_SHARED_FIRST. */
#define CLI_OPT_OWN_FIRST 0x100
#define CLI_OPT_SHARED_FIRST 0x1000

/* A decimal number from min to max: 0, or -1 (nothing printed). */
int cli_parse_number(const char *s, long min, long max, long *out);

/* A command's own options and operands. */
struct cli_extra_options {
	const char *command;            /* "dump", for messages */
	const char *operand;            /* "PID": the first, required */
	int max_operands;               /* how many may follow the options */
	const struct option *longopts;  /* NULL-terminated; val is the id */
	const char *shortopts;          /* getopt letters, e.g. "n" */
	/* Take option id (with its argument, or NULL): 0, or a usage
	 * error's status after printing it. */
	int (*take)(void *ctx, int id, const char *arg);
	void *ctx;
};

/*
 * Parse argv (argv[0] is the command's name) up to the first operand,
 * whose index goes to *first; there are 1 to extra->max_operands of
 * them.  0, or a usage error's status after printing it.  --help prints
 * the usage and exits.
 */
/* A DURATION option's value (common/duration.h): 0, or a usage error's
 * status after printing "COMMAND: NAME: why". */
int cli_parse_duration(const char *command, const char *name,
		       const char *arg, long long *ms);

int cli_parse_view_options(int argc, char **argv,
			   const struct cli_extra_options *extra,
			   struct view_options *o, int *first);

#endif
