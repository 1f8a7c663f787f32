#include "cli/options.h"

#include <ctype.h>
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

/* --format: "text", "json" or "dot": 0, or a usage error's status
 * after printing it. */
static int parse_format(const char *name, enum report_format *fmt)
{
	if (!strcmp(name, "text"))
		*fmt = REPORT_TEXT;
	else if (!strcmp(name, "json"))
		*fmt = REPORT_JSON;
	else if (!strcmp(name, "dot"))
		*fmt = REPORT_DOT;
	else
		return cli_usage_error("unknown format '%s' (text, json or dot)",
				       name);
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

int cli_parse_number(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	/* Digits, perhaps after a minus: not the blanks or the plus sign
	 * strtol() would take too (" 12" is no pid). */
	if (!isdigit((unsigned char)s[0]) &&
	    !(s[0] == '-' && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_pid(const char *s, int *pid)
{
	long v;

	if (cli_parse_number(s, 1, 0x3fffffff, &v) < 0)
		return -1;
	*pid = (int)v;
	return 0;
}

/* A numeric option's value from min to max, or a usage error. */
static int number_option(const char *name, const char *arg, long min,
			 long max, long *out)
{
	if (cli_parse_number(arg, min, max, out) < 0)
		return cli_usage_error("%s takes a number from %ld to %ld, "
				       "not '%s'", name, min, max, arg);
	return 0;
}

/* The shared and the command's long options, as getopt_long takes them;
 * the short ones in shortopts (":" first: see the loop). */
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
	snprintf(shortopts, shortlen, ":jlf:h%s",
		 extra->shortopts ? extra->shortopts : "");
}

int cli_parse_view_options(int argc, char **argv,
			   const struct cli_extra_options *extra,
			   struct view_options *o, int *first)
{
	struct option longopts[MAX_LONGOPTS];
	char shortopts[64];
	long v;
	int c, ret;

	memset(o, 0, sizeof(*o));
	merge_options(extra, longopts, shortopts, sizeof(shortopts));
	opterr = 0;
	optind = 1;
	/* Options may follow the operands too (`dump 1234 --json`, as
	 * py-spy and gdb users type it; "--" ends them); ":" tells a
	 * missing value from an unknown option. */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->format = REPORT_JSON;
			break;
		case 'f':
			if (parse_format(optarg, &o->format))
				return CS_ERR_USAGE;
			break;
		case 'l':
			o->collect.locals = 1;
			break;
		case OPT_NATIVE:
		case OPT_NATIVE_ALL:
			/* (one or the other, as the synopsis says: not the
			 * last one given, silently) */
			if (o->collect.native &&
			    o->collect.native != (c == OPT_NATIVE ? 1 : 2))
				return cli_usage_error("--native and "
						       "--native-all cannot "
						       "be used together");
			o->collect.native = c == OPT_NATIVE ? 1 : 2;
			break;
		case OPT_MAX_FRAMES:
			if (number_option("--max-frames", optarg,
					  COLLECT_MIN_FRAMES, COLLECT_MAX_FRAMES,
					  &v))
				return CS_ERR_USAGE;
			o->collect.max_frames = (size_t)v;
			break;
		case OPT_NO_SOURCE:
			o->collect.no_source = 1;
			break;
		case OPT_ALL:
			o->collect.expand_all = 1;
			break;
		case OPT_MAX_ITEMS:
			if (number_option("--max-items", optarg, 1,
					  COLLECT_MAX_ITEMS_LIMIT, &v))
				return CS_ERR_USAGE;
			o->collect.max_items = (int)v;
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
