/*
 * coroscope dump PID: locate the interpreter (before stopping anything),
 * stop the target, take the snapshot, resume, then print.
 */
#include "cli/commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/collect.h"
#include "cli/options.h"
#include "cli/report.h"
#include "common/banned.h"

struct dump_options {
	struct view_options v;
	int pid;
};

static int take_option(void *ctx, int id, const char *arg)
{
	struct view_options *v = ctx;

	(void)arg;
	if (id == 'n')
		v->collect.no_block = 1;
	return 0;
}

static int parse_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option own[] = {
		{ "no-block", no_argument, NULL, 'n' },
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
	ret = collect_live(&c, o.pid, &o.v.collect, &err);
	if (ret == 0) {
		if (o.v.format == REPORT_JSON)
			report_json(stdout, &c);
		else if (o.v.format == REPORT_DOT)
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
