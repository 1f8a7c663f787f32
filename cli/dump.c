/*
 * coroscope dump PID: locate the interpreter (before stopping anything),
 * stop the target, take the snapshot, resume, then print.
 */
#include "cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/collect.h"
#include "cli/report.h"
#include "common/banned.h"

enum { OPT_NATIVE = 256, OPT_NATIVE_ALL };

struct dump_options {
	enum report_format format;
	struct collect_options collect;
	int pid;
};

int cli_parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x3fffffff)
		return -1;
	*pid = (int)v;
	return 0;
}

static int parse_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "locals", no_argument, NULL, 'l' },
		{ "native", no_argument, NULL, OPT_NATIVE },
		{ "native-all", no_argument, NULL, OPT_NATIVE_ALL },
		{ "no-block", no_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+jlnf:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->format = REPORT_JSON;
			break;
		case 'f':
			if (report_parse_format(optarg, &o->format))
				return CS_ERR_USAGE;
			break;
		case 'l':
			o->collect.locals = 1;
			break;
		case OPT_NATIVE:
			o->collect.native = 1;
			break;
		case OPT_NATIVE_ALL:
			o->collect.native = 2;
			break;
		case 'n':
			o->collect.no_block = 1;
			break;
		case 'h':
			cli_usage(stdout);
			exit(0);
		default:
			if (optopt == 'f')
				return cli_usage_error("--format needs an argument");
			return cli_usage_error("unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("dump: missing PID");
	if (optind + 1 < argc)
		return cli_usage_error("dump: unexpected argument '%s'",
				       argv[optind + 1]);
	if (cli_parse_pid(argv[optind], &o->pid) < 0)
		return cli_usage_error("dump: '%s' is not a process id",
				       argv[optind]);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	struct collection c;
	struct cs_err err;
	int ret;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	cs_err_init(&err);
	ret = collect_live(&c, o.pid, &o.collect, &err);
	if (ret == 0) {
		if (o.format == REPORT_JSON)
			report_json(stdout, &c);
		else if (o.format == REPORT_DOT)
			report_dot(stdout, &c);
		else
			report_text(stdout, &c);
	}
	collection_release(&c);
	if (fflush(stdout) != 0 && ret == 0)
		ret = cs_fail(&err, CS_ERR_INTERNAL, "cannot write output: %s",
			      strerror(errno));
	return ret < 0 ? cli_report_error(&err) : 0;
}
