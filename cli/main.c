/*
 * coroscope: look inside a running or crashed CPython process from the
 * outside.  This file only dispatches; see cli/dump.c for the work.
 */
#include "cli/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/banned.h"

void cli_usage(FILE *out)
{
	fputs("usage: coroscope dump [--json] [--locals] [--no-block] [--format FMT] PID\n"
	      "       coroscope --help | --version\n"
	      "\n"
	      "Show every thread's Python stack, every asyncio task with its await\n"
	      "chain, and every generator and coroutine of a running CPython\n"
	      "process (3.6 to 3.14), read from outside the process.\n"
	      "\n"
	      "commands:\n"
	      "  dump PID          print threads, tasks and generators\n"
	      "\n"
	      "dump options:\n"
	      "  -j, --json        print one JSON document (schema 1)\n"
	      "  -l, --locals      show each frame's arguments and locals\n"
	      "  -n, --no-block    do not stop the target while reading (racy)\n"
	      "  -f, --format FMT  text (default), json, or dot (the await graph)\n"
	      "\n"
	      "general options:\n"
	      "  -h, --help        show this help and exit\n"
	      "  -V, --version     show the version and exit\n"
	      "\n"
	      "Exit status: 0 ok, 1 internal error, 2 usage, 3 no such process,\n"
	      "4 permission denied, 5 not a Python process, 6 unsupported Python\n"
	      "version, 7 the process exited while being read, 8 unreadable or\n"
	      "inconsistent target memory.  See coroscope(1).\n", out);
}

int cli_report_error(const struct cs_err *err)
{
	fprintf(stderr, "coroscope: %s\n", err->msg[0] ? err->msg : "unknown error");
	return err->code ? err->code : CS_ERR_INTERNAL;
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("coroscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see coroscope --help)\n", stderr);
	return CS_ERR_USAGE;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return cli_usage_error("missing command");
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("coroscope %s\n", COROSCOPE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	return cli_usage_error("unknown command '%s'", cmd);
}
