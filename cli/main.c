/*
 * coroscope: look inside a running or crashed CPython process from the
 * outside.  This file only dispatches, through the table of commands;
 * each command is cli/cmd_NAME.c.
 */
#include "cli/commands.h"
#include "cli/escape.h"
#include "cli/version.h"

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

void cli_usage(FILE *out)
{
	fputs("usage: coroscope dump [--json] [--locals] [--no-block] [--format FMT]\n"
	      "                      [--no-source] [--all] [--max-items N] PID\n"
	      "       coroscope run [--timeout DURATION] [--report FILE]\n"
	      "                     [--kill-after DURATION] [--no-source]\n"
	      "                     -- COMMAND [ARG...]\n"
	      "       coroscope core [--json] [--locals] [--format FMT] [--no-source]\n"
	      "                      [--all] [--max-items N] [--sysroot DIR]\n"
	      "                      [--lib-search-path DIR:DIR] COREFILE [EXECUTABLE]\n"
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
	      "  -f, --format FMT  text (default), json, or dot (the await graph)\n"
	      "  --no-source       no source lines under frames\n"
	      "  --all             identical tasks one by one, not grouped\n"
	      "  --max-items N     --locals: items of a container shown (1-100, 8)\n"
	      "\n"
	      "core options (also those of dump but --no-block):\n"
	      "  --sysroot DIR     look for the core's files under DIR\n"
	      "  --lib-search-path DIR:DIR  and by name in these directories\n"
	      "\n"
	      "run options (DURATION: 90, 90s, 15m, 1h; SIGUSR1 dumps at once):\n"
	      "  -t, --timeout DURATION     dump and stop COMMAND after this long\n"
	      "  -r, --report FILE          also write the dump as JSON to FILE\n"
	      "                             (checked before COMMAND starts)\n"
	      "  -k, --kill-after DURATION  SIGKILL this long after SIGTERM\n"
	      "                             (default 5s)\n"
	      "  --no-source                no source lines in the report\n"
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
	/* Messages quote names the target chose (its comm, paths). */
	fputs("coroscope: ", stderr);
	esc_text(stderr, err->msg[0] ? err->msg : "unknown error");
	fputc('\n', stderr);
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
	size_t i;

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
