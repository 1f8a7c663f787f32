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
	fputs("usage: coroscope dump [--json] [--locals] [--no-block] [--format FMT]\n"
	      "                      [--native | --native-all] PID\n"
	      "       coroscope run [--timeout DURATION] [--report FILE]\n"
	      "                     [--kill-after DURATION] -- COMMAND [ARG...]\n"
	      "       coroscope core [--json] [--locals] [--format FMT] [--sysroot DIR]\n"
	      "                      [--lib-search-path DIR:DIR] [--native | --native-all]\n"
	      "                      COREFILE [EXECUTABLE]\n"
	      "       coroscope --help | --version\n"
	      "\n"
	      "Show every thread's Python stack, every asyncio task with its await\n"
	      "chain, and every generator and coroutine of a running CPython\n"
	      "process (3.6 to 3.14), read from outside the process.\n"
	      "\n"
	      "commands:\n"
	      "  dump PID          print threads, tasks and generators\n"
	      "  run COMMAND       run COMMAND; when it hangs, dump each of its\n"
	      "                    processes to stderr, then stop them all\n"
	      "  core COREFILE     the same report from an ELF core file (kernel\n"
	      "                    or gcore), with how the process died\n"
	      "\n"
	      "dump options:\n"
	      "  -j, --json        print one JSON document (schema 1)\n"
	      "  -l, --locals      show each frame's arguments and locals\n"
	      "  -n, --no-block    do not stop the target while reading (racy)\n"
	      "  -f, --format FMT  text (default), json, or dot (the await graph)\n"
	      "  --native          also the C frames: each eval-loop frame replaced\n"
	      "                    by the Python frames it runs, the interpreter's\n"
	      "                    calling machinery hidden; and what each thread\n"
	      "                    is blocked in\n"
	      "  --native-all      the same with every C frame shown\n"
	      "\n"
	      "core options (also --json, --locals, --format, --native and\n"
	      "--native-all as for dump):\n"
	      "  --sysroot DIR     look for the core's files under DIR\n"
	      "  --lib-search-path DIR:DIR  and by name in these directories\n"
	      "\n"
	      "run options (DURATION: 90, 90s, 15m, 1h; SIGUSR1 dumps at once):\n"
	      "  -t, --timeout DURATION     dump and stop COMMAND after this long\n"
	      "  -r, --report FILE          also write the dump as JSON to FILE\n"
	      "  -k, --kill-after DURATION  SIGKILL this long after SIGTERM\n"
	      "                             (default 5s)\n"
	      "\n"
	      "general options:\n"
	      "  -h, --help        show this help and exit\n"
	      "  -V, --version     show the version and exit\n"
	      "\n"
	      "Exit status: 0 ok, 1 internal error, 2 usage, 3 no such process,\n"
	      "4 permission denied, 5 not a Python process, 6 unsupported Python\n"
	      "version, 7 the process exited while being read, 8 unreadable or\n"
	      "inconsistent target memory, 9 bad or truncated core file, 10 the\n"
	      "core's executable not found.  run exits with COMMAND's status\n"
	      "(128+N when signal N ended it), or 124 when it timed out.\n"
	      "See coroscope(1).\n", out);
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
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "core"))
		return cmd_core(argc - 1, argv + 1);
	return cli_usage_error("unknown command '%s'", cmd);
}
