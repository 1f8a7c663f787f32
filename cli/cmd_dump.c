/*
 * coroscope dump PID: locate the interpreter (before stopping anything),
 * stop the target, take the snapshot, resume, then print.
 */
#include "cli/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/collect.h"
#include "cli/options.h"
#include "cli/report.h"
#include "common/banned.h"

struct dump_options {
	struct view_options v;
	int pid;
};

enum { OPT_RETRIES = CLI_OPT_OWN_FIRST };

/* --retries N: 0 to COLLECT_MAX_RETRIES.  collect_options.retries takes 0
 * to mean the default, so an explicit 0 is stored as -1 (none). */
static int parse_retries(const char *arg, int *retries)
{
	long v;

	if (cli_parse_number(arg, 0, COLLECT_MAX_RETRIES, &v) < 0)
		return cli_usage_error("dump: --retries takes a number from 0 "
				       "to %d, not '%s'", COLLECT_MAX_RETRIES,
				       arg);
	*retries = v ? (int)v : -1;
	return 0;
}

static int take_option(void *ctx, int id, const char *arg)
{
	struct view_options *v = ctx;

	if (id == 'n')
		v->collect.no_block = 1;
	else if (id == OPT_RETRIES)
		return parse_retries(arg, &v->collect.retries);
	return 0;
}

static int parse_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option own[] = {
		{ "no-block", no_argument, NULL, 'n' },
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_extra_options extra = { "dump", "PID", 1, own, "n",
					   take_option, &o->v };
	int ret, i;

	memset(o, 0, sizeof(*o));
	ret = cli_parse_view_options(argc, argv, &extra, &o->v, &i);
	if (ret)
		return ret;
	if (cli_parse_pid(argv[i], &o->pid) < 0)
		return cli_usage_error("dump: '%s' is not a process id",
				       argv[i]);
	/* (it would do nothing: only a read that does not stop the
	 * target is tried again) */
	if (o->v.collect.retries && !o->v.collect.no_block)
		return cli_usage_error("dump: --retries needs --no-block");
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	/* (29 KiB: on the heap's huge pages, not 8 new stack pages) */
	struct collection *c;
	struct cs_err err;
	int ret, werr;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	cs_err_init(&err);
	o.v.collect.off_cpu = 1;
	c = xmalloc(sizeof(*c));
	ret = collect_live(c, o.pid, &o.v.collect, &err);
	if (ret == 0) {
		collection_done_reading(c);
		if (o.v.format == REPORT_JSON)
			report_json(stdout, c);
		else if (o.v.format == REPORT_DOT)
			report_dot(stdout, c);
		else
			report_text(stdout, c);
	}
	werr = errno;  /* a failed write's, if one failed */
	collection_leave(c);
	free(c);
	if (ret == 0)
		ret = cli_output_written(stdout, werr, &err);
	return ret < 0 ? cli_report_error(&err) : 0;
}
