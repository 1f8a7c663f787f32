#include "cli/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/duration.h"
#include "common/error.h"
#include "common/banned.h"

/* The shared options and room for a command's own. */
#define MAX_LONGOPTS 20

/* Ids of the shared long options without a letter: from
 * CLI_OPT_SHARED_FIRST up, so that they never meet a command's own
 * (CLI_OPT_OWN_FIRST up, see options.h). */
enum {
	OPT_NATIVE = CLI_OPT_SHARED_FIRST, OPT_NATIVE_ALL, OPT_MAX_FRAMES,
	OPT_NO_SOURCE, OPT_ALL, OPT_MAX_ITEMS
};

static const struct option common_longopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "locals", no_argument, NULL, 'l' },
	{ "format", required_argument, NULL, 'f' },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "native-all", no_argument, NULL, OPT_NATIVE_ALL },
	{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
	{ "help", no_argument, NULL, 'h' },
	{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "max-items", required_argument, NULL, OPT_MAX_ITEMS },
};
#define NCOMMON (sizeof(common_longopts) / sizeof(common_longopts[0]))

/* --max-frames N: COLLECT_MIN_FRAMES to COLLECT_MAX_FRAMES. */
static int parse_max_frames(const char *arg, size_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < (long)COLLECT_MIN_FRAMES ||
	    v > (long)COLLECT_MAX_FRAMES)
		return cli_usage_error("--max-frames takes a number from %u "
				       "to %u, not '%s'", COLLECT_MIN_FRAMES,
				       COLLECT_MAX_FRAMES, arg);
	*out = (size_t)v;
	return 0;
}

int cli_parse_duration(const char *command, const char *name,
		       const char *arg, long long *ms)
{
	struct cs_err err;

	cs_err_init(&err);
	if (duration_parse(arg, ms, &err) < 0)
		return cli_usage_error("%s: %s: %s", command, name, err.msg);
	return 0;
}

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

int cli_parse_max_items(const char *s, int *n)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > COLLECT_MAX_ITEMS_LIMIT)
		return -1;
	*n = (int)v;
	return 0;
}

/* The shared and the command's long options, as getopt_long takes them;
 * the short ones in shortopts ("+:" first: see the loop). */
static void merge_options(const struct cli_extra_options *extra,
			  struct option *longopts, char *shortopts,
			  size_t shortlen)
{
	size_t n = 0, i;

	for (i = 0; i < NCOMMON; i++)
		longopts[n++] = common_longopts[i];
	for (i = 0; extra->longopts && extra->longopts[i].name; i++) {
		if (n >= MAX_LONGOPTS - 1)
			CS_BUG("too many options");
		longopts[n++] = extra->longopts[i];
	}
	memset(&longopts[n], 0, sizeof(longopts[n]));
	snprintf(shortopts, shortlen, "+:jlf:h%s",
		 extra->shortopts ? extra->shortopts : "");
}

int cli_parse_view_options(int argc, char **argv,
			   const struct cli_extra_options *extra,
			   struct view_options *o, int *first)
{
	struct option longopts[MAX_LONGOPTS];
	char shortopts[64];
	int c, ret;

	memset(o, 0, sizeof(*o));
	merge_options(extra, longopts, shortopts, sizeof(shortopts));
	opterr = 0;
	optind = 1;
	/* "+": the first operand ends the options; ":" tells a missing
	 * value from an unknown option. */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
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
		case OPT_MAX_FRAMES:
			if (parse_max_frames(optarg, &o->collect.max_frames))
				return CS_ERR_USAGE;
			break;
		case OPT_NO_SOURCE:
			o->collect.no_source = 1;
			break;
		case OPT_ALL:
			o->collect.expand_all = 1;
			break;
		case OPT_MAX_ITEMS:
			if (cli_parse_max_items(optarg,
						&o->collect.max_items))
				return cli_usage_error(
					"--max-items: '%s' is not a number "
					"from 1 to %d", optarg,
					COLLECT_MAX_ITEMS_LIMIT);
			break;
		case 'h':
			cli_usage(stdout);
			exit(0);
		case ':':
			return cli_usage_error("'%s' needs an argument",
					       argv[optind - 1]);
		case '?':
			return cli_usage_error("unknown option '%s'",
					       argv[optind - 1]);
		default:
			ret = extra->take(extra->ctx, c, optarg);
			if (ret)
				return ret;
			break;
		}
	}
	if (optind >= argc)
		return cli_usage_error("%s: missing %s", extra->command,
				       extra->operand);
	if (argc - optind > extra->max_operands)
		return cli_usage_error("%s: unexpected argument '%s'",
				       extra->command,
				       argv[optind + extra->max_operands]);
	*first = optind;
	return 0;
}
