/*
 * coroscope: look inside a running or crashed CPython process from the
 * outside.  This file only dispatches, through the table of commands;
 * each command is cli/cmd_NAME.c.
 */
#include "cli/commands.h"
#include "cli/escape.h"
#include "cli/version.h"
#include "common/hugeheap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/banned.h"

struct command {
	const char *name;
	const char *operands;      /* for the list in --help */
	int (*run)(int argc, char **argv);
	const char *help;          /* one line; "\n" continues it */
};

static const struct command commands[] = {
	{ "dump", "PID", cmd_dump, "print threads, tasks and generators" },
	{ "run", "COMMAND", cmd_run, "run COMMAND; when it hangs, dump each "
	  "of its\nprocesses to stderr, then stop them all" },
	{ "core", "COREFILE", cmd_core, "the same report from an ELF core file "
	  "(kernel\nor gcore), with how the process died" },
	{ "watch", "PID", cmd_watch, "sample PID every interval; say which "
	  "tasks and\nthreads make no progress, and for how long" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void list_commands(FILE *out)
{
	char label[32];
	const char *p;
	size_t i;

	for (i = 0; i < NCOMMANDS; i++) {
		snprintf(label, sizeof(label), "%s %s", commands[i].name,
			 commands[i].operands);
		fprintf(out, "  %-17s ", label);
		for (p = commands[i].help; *p; p++) {
			if (*p == '\n')
				fprintf(out, "\n%20s", "");
			else
				fputc(*p, out);
		}
		fputc('\n', out);
	}
}

/* The end of cli_usage(), apart: functions here stay under 80 lines. */
static void usage_watch_and_general(FILE *out)
{
	fputs("watch options (D: a DURATION as for run, 0.5s, 2m):\n"
	      "  -i, --interval D  sample every D (default 1s)\n"
	      "  -f, --for D       stop after D (default: until interrupted, or\n"
	      "                    until the target exits); then the summary\n"
	      "  -s, --stuck D     report what made no progress for D (default 10s)\n"
	      "  -j, --json        the summary as one JSON document\n"
	      "  -n, --no-block    never stop the target (racy samples)\n"
	      "  --native          also read C frames: say what a stuck thread is\n"
	      "                    blocked in (lock, sleep, io ...) and where\n"
	      "  --all             alike tasks, threads, generators not grouped\n"
	      "\n"
	      "general options:\n"
	      "  -h, --help        show this help and exit\n"
	      "  -V, --version     show the version and exit\n"
	      "\n"
	      "Exit status: 0 ok, 1 internal error, 2 usage, 3 no such process,\n"
	      "4 permission denied, 5 not a Python process, 6 unsupported Python\n"
	      "version, 7 the process exited while being read, 8 unreadable or\n"
	      "inconsistent target memory, 9 bad or truncated core file, 10 the\n"
	      "core's executable or libpython not found or not matching.  run\n"
	      "exits with COMMAND's status (128+N when signal N ended it), or\n"
	      "124 when it timed out.\n"
	      "See coroscope(1).\n", out);
}

void cli_usage(FILE *out)
{
	fputs("usage: coroscope dump [--json] [--locals] [--no-block [--retries N]]\n"
	      "                      [--format FMT] [--native | --native-all]\n"
	      "                      [--max-frames N] [--no-source] [--all]\n"
	      "                      [--max-items N] PID\n"
	      "       coroscope run [--timeout DURATION] [--report FILE]\n"
	      "                     [--kill-after DURATION] [--no-native]\n"
	      "                     [--no-source] [--sample-last DURATION] [--all]\n"
	      "                     -- COMMAND [ARG...]\n"
	      "       coroscope core [--json] [--locals] [--format FMT] [--sysroot DIR]\n"
	      "                      [--lib-search-path DIR:DIR] [--native | --native-all]\n"
	      "                      [--max-frames N] [--no-source] [--all]\n"
	      "                      [--max-items N] COREFILE [EXECUTABLE]\n"
	      "       coroscope watch [--interval D] [--for D] [--stuck D] [--json]\n"
	      "                       [--no-block] [--native] [--all] PID\n"
	      "       coroscope --help | --version\n"
	      "\n"
	      "Show every thread's Python stack, every asyncio task with its await\n"
	      "chain, and every generator and coroutine of a running CPython\n"
	      "process (3.6 to 3.14), read from outside the process.\n"
	      "\n"
	      "commands:\n", out);
	list_commands(out);
	fputs("\n"
	      "dump options:\n"
	      "  -j, --json        print one JSON document (schema 1)\n"
	      "  -l, --locals      show each frame's arguments and locals\n"
	      "  -n, --no-block    do not stop the target while reading (racy)\n"
	      "  --retries N       with --no-block: read again up to N times when\n"
	      "                    the target changed under the read (default 3)\n"
	      "  -f, --format FMT  text (default), json, or dot (the await graph)\n"
	      "  --native          also the C frames: each eval-loop frame replaced\n"
	      "                    by the Python frames it runs, the interpreter's\n"
	      "                    calling machinery hidden; and what each thread\n"
	      "                    is blocked in\n"
	      "  --native-all      the same with every C frame shown\n"
	      "  --max-frames N    keep at most N Python frames of a thread: the\n"
	      "                    innermost and the 8 outermost (default 4096)\n"
	      "  --no-source       no source lines under frames\n"
	      "  --all             identical tasks and threads one by one, not grouped\n"
	      "  --max-items N     --locals: items of a container shown (1-100, 8)\n"
	      "\n"
	      "core options (also those of dump but --no-block and --retries):\n"
	      "  --sysroot DIR     look for the core's files under DIR\n"
	      "  --lib-search-path DIR:DIR  and by name in these directories\n"
	      "\n"
	      "run options (DURATION: 90, 90s, 15m, 1h; SIGUSR1 dumps at once):\n"
	      "  -t, --timeout DURATION     dump and stop COMMAND after this long\n"
	      "  -r, --report FILE          also write the dump as JSON to FILE\n"
	      "                             (checked before COMMAND starts)\n"
	      "  -k, --kill-after DURATION  SIGKILL this long after SIGTERM\n"
	      "                             (default 5s)\n"
	      "  --no-native                the dump without native (C) frames\n"
	      "  --no-source                no source lines in the report\n"
	      "  --sample-last DURATION     sample the command this long before\n"
	      "                             the timeout, to tell stuck from busy\n"
	      "                             (default: half the timeout, at most\n"
	      "                             10s; 0: only the dump)\n"
	      "  --all                      alike tasks, threads, generators not\n"
	      "                             grouped\n"
	      "\n", out);
	usage_watch_and_general(out);
}

/* Every error code and the exit status it gives (man/coroscope.1, EXIT
 * STATUS): a finer cause shares the status of its kind. */
static const struct {
	int code, status;
} exit_statuses[] = {
	{ CS_ERR_INTERNAL, 1 },
	{ CS_ERR_USAGE, 2 },
	{ CS_ERR_NO_PROCESS, 3 },
	{ CS_ERR_PERMISSION, 4 },
	{ CS_ERR_NOT_PYTHON, 5 },
	{ CS_ERR_UNSUPPORTED, 6 },
	{ CS_ERR_EXITED, 7 },
	{ CS_ERR_MEMORY, 8 },
	{ CS_ERR_NOT_STOPPED, 8 },
	{ CS_ERR_CORE, 9 },
	{ CS_ERR_NO_EXE, 10 },
	{ CS_ERR_TIMEOUT, 124 },
};

int cli_exit_status(int code)
{
	size_t i;

	for (i = 0; i < sizeof(exit_statuses) / sizeof(exit_statuses[0]); i++)
		if (exit_statuses[i].code == code)
			return exit_statuses[i].status;
	/* No error recorded, or a code without a status: a bug. */
	return CS_ERR_INTERNAL;
}

int cli_report_error(const struct cs_err *err)
{
	/* Messages quote names the target chose (its comm, paths). */
	fputs("coroscope: ", stderr);
	esc_text(stderr, err->msg[0] ? err->msg : "unknown error");
	fputc('\n', stderr);
	return cli_exit_status(err->code);
}

int cli_output_written(FILE *out, int write_errno, struct cs_err *err)
{
	/* A large write that failed leaves only the error indicator (what
	 * stdio still buffers may flush fine); a failed flush says why. */
	int failed = ferror(out) != 0;

	if (fflush(out) != 0)
		return cs_fail(err, CS_ERR_INTERNAL, "cannot write output: %s",
			       strerror(errno));
	if (failed)
		return cs_fail(err, CS_ERR_INTERNAL, "cannot write output: %s",
			       strerror(write_errno ? write_errno : EIO));
	return 0;
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
	size_t i;

	hugeheap_init();
	if (!cmd)
		return cli_usage_error("missing command");
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		cli_print_version(stdout);
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return cli_usage_error("unknown command '%s'", cmd);
}
