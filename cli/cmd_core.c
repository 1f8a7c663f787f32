/*
 * coroscope core COREFILE [EXECUTABLE]: the report dump gives for a live
 * process, read from an ELF core file (attach/core.c), through the same
 * collection pipeline and report functions, after a header saying how
 * the process died.
 */
#include "cli/commands.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attach/core.h"
#include "cli/collect.h"
#include "cli/escape.h"
#include "cli/json.h"
#include "cli/options.h"
#include "cli/report.h"
#include "common/strbuf.h"
#include "common/banned.h"

struct core_cli_options {
	struct view_options v;
	struct core_options core;
	const char *path;
};

enum { OPT_SYSROOT = CLI_OPT_OWN_FIRST, OPT_LIB_SEARCH_PATH };

static int take_option(void *ctx, int id, const char *arg)
{
	struct core_options *core = ctx;

	if (id == OPT_SYSROOT)
		core->sysroot = arg;
	else if (id == OPT_LIB_SEARCH_PATH)
		core->lib_search_path = arg;
	return 0;
}

static int parse_options(int argc, char **argv, struct core_cli_options *o)
{
	static const struct option own[] = {
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "lib-search-path", required_argument, NULL,
		  OPT_LIB_SEARCH_PATH },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_extra_options extra = { "core", "COREFILE", 2, own, "",
					   take_option, &o->core };
	int ret, i;

	memset(o, 0, sizeof(*o));
	ret = cli_parse_view_options(argc, argv, &extra, &o->v, &i);
	if (ret)
		return ret;
	o->path = argv[i++];
	if (i < argc)
		o->core.executable = argv[i];
	return 0;
}

/* The core's own warnings, before the report (JSON too: its "core"
 * object's, where a core cut short is said as well). */
static void print_warnings(struct collection *c,
			   const struct core_info *in, int failed)
{
	if (in->truncated && !failed)
		cs_warn(&c->warnings, CS_WARN_CORE, "core file '%s' is "
			"truncated (%" PRIu64 " of %" PRIu64 " bytes): memory "
			"in the missing part is unreadable", in->path,
			in->size, in->expected_size);
	report_warnings(stderr, &c->warnings, CS_WARN_CORE);
}

/* Give the library's message the context only a core has. */
static void explain(struct cs_err *err, const struct memsrc *ms,
		    const struct core_info *in)
{
	const char *why, *lib = err->code == CS_ERR_NOT_PYTHON ?
		core_unusable_file(ms, "libpython", &why) : NULL;

	if (lib) {
		/* Not "not Python": its interpreter is in a file this
		 * machine has no right copy of (the warning above says
		 * where it looked). */
		cs_refail(err, CS_ERR_NO_EXE, "core '%s' (process %d, %s): "
			  "its interpreter is in '%s', %s: give the process's "
			  "own with --sysroot or --lib-search-path",
			  in->path, in->pid, in->comm[0] ? in->comm : "?", lib,
			  !strcmp(why, "missing") ? "not found here" :
			  "and no copy here matches the core");
	} else if (in->truncated && err->code != CS_ERR_NOT_PYTHON) {
		/* Whatever failed, the missing part is the likeliest cause,
		 * and what the exit status says. */
		cs_err_prefix(err, "core file '%s' is truncated (%" PRIu64
			      " of %" PRIu64 " bytes) and the missing part is "
			      "needed", in->path, in->size, in->expected_size);
		err->code = CS_ERR_CORE;
	} else if (err->code == CS_ERR_NOT_PYTHON) {
		cs_err_prefix(err, "core '%s' (process %d, %s) is not of a "
			      "Python process", in->path, in->pid,
			      in->comm[0] ? in->comm : "?");
	}
}

static void text_header(FILE *out, const struct core_info *in)
{
	fputs("Core file: ", out);
	esc_text(out, in->path);
	fprintf(out, " (written by %s)\n", in->by_gdb ? "gcore" : "the kernel");
	if (!in->signal) {
		fprintf(out, "Process %d was running: no signal (a core saved "
			"by gcore)\n", in->pid);
		return;
	}
	fprintf(out, "Process %d %s by signal %d (%s)", in->pid,
		in->by_gdb ? "stopped" : "killed", in->signal,
		in->signal_name ? in->signal_name : "?");
	if (in->signal_tid)
		fprintf(out, " in thread %d", in->signal_tid);
	if (in->has_fault_addr)
		fprintf(out, " at address 0x%" PRIx64, in->fault_addr);
	if (in->sender_pid > 0 && in->sender_pid == in->pid)
		fputs(", raised by the process itself", out);
	else if (in->sender_pid > 0)
		fprintf(out, ", sent by process %d", in->sender_pid);
	fputc('\n', out);
}

static void json_core(struct json *j, const struct core_info *in,
		      const struct cs_warnings *warnings)
{
	char addr[32];

	json_key(j, "core");
	json_begin_object(j);
	json_key(j, "path");
	json_string(j, in->path);
	json_key(j, "written_by");
	json_string(j, in->by_gdb ? "gcore" : "kernel");
	json_key(j, "signal");
	if (in->signal)
		json_int(j, in->signal);
	else
		json_null(j);
	json_key(j, "signal_name");
	json_string(j, in->signal_name);
	json_key(j, "thread");
	if (in->signal_tid)
		json_int(j, in->signal_tid);
	else
		json_null(j);
	json_key(j, "fault_address");
	if (in->has_fault_addr) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, in->fault_addr);
		json_string(j, addr);
	} else {
		json_null(j);
	}
	json_key(j, "sender_pid");
	if (in->sender_pid > 0)
		json_int(j, in->sender_pid);
	else
		json_null(j);
	json_key(j, "command");
	json_string(j, in->psargs);
	json_key(j, "executable");
	json_string(j, in->exe_target_path);
	json_key(j, "truncated");
	json_bool(j, in->truncated);
	json_key(j, "warnings");
	report_json_warnings(j, warnings, CS_WARN_CORE);
	json_end_object(j);
}

static void print_report(const struct core_cli_options *o,
			 const struct collection *c, const struct core_info *in)
{
	struct json *j;

	switch (o->v.format) {
	case REPORT_JSON:
		j = json_new(stdout, 1);
		json_background(j);
		json_begin_object(j);
		report_json_members(j, c);
		json_core(j, in, &c->warnings);
		json_end_object(j);
		free(j);
		break;
	case REPORT_DOT:
		report_dot(stdout, c);
		break;
	case REPORT_TEXT:
		text_header(stdout, in);
		report_text(stdout, c);
		break;
	}
}

/*
 * Whose files the core's source lines may come from (cli/source.h): the
 * real user and group it records, where its owner could not have forged
 * them: a file root's, or that user's own.  A rootless container's
 * process records its own namespace's ids (0 for its root), and its
 * core is its host user's: not trusted, nor a core another user wrote
 * claiming someone else.  Else only what everyone may read.
 */
static void core_user(struct source_user *u, const char *path,
		      const struct core_info *in)
{
	struct stat st;

	memset(u, 0, sizeof(*u));
	if (!in->has_ids || stat(path, &st) != 0 ||
	    (st.st_uid != 0 && (long)st.st_uid != in->uid))
		return;
	u->known = 1;
	u->uid = in->uid;
	u->gid = in->gid;
}

/* When the core was written: its file's modification time (a copy's
 * may be later, never earlier), or 0. */
static double core_time(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (double)st.st_mtim.tv_sec : 0;
}

int cmd_core(int argc, char **argv)
{
	struct core_cli_options o;
	struct collection c;
	const struct core_info *in;
	struct memsrc *ms;
	struct cs_err err;
	int ret, werr;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	cs_err_init(&err);
	collection_init(&c);
	o.core.warnings = &c.warnings;
	ret = core_open(&ms, o.path, &o.core, &err);
	if (ret < 0) {
		collection_release(&c);
		return cli_report_error(&err);
	}
	in = core_info(ms);
	core_user(&o.v.collect.core_user, o.path, in);
	o.v.collect.core_time = core_time(o.path);
	/* Takes ms: in stays valid until collection_release(). */
	ret = collect_source(&c, ms, &o.v.collect, &err);
	if (in->command)
		c.command = xstrdup(in->command);
	c.signal_tid = in->signal_tid;
	c.signal_name = in->signal_name;
	print_warnings(&c, in, ret < 0);
	if (ret < 0) {
		explain(&err, ms, in);
	} else {
		collection_done_reading(&c);
		print_report(&o, &c, in);
	}
	werr = errno;  /* a failed write's, if one failed */
	collection_leave(&c);
	if (ret == 0)
		ret = cli_output_written(stdout, werr, &err);
	return ret < 0 ? cli_report_error(&err) : 0;
}
