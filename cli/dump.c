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
#include <time.h>
#include <unistd.h>

#include "attach/live.h"
#include "cli/report.h"
#include "common/strbuf.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "common/banned.h"

struct dump_options {
	int json, locals, no_block;
	int pid;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_pid(const char *s, int *pid)
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
		{ "no-block", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+jlnh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'l':
			o->locals = 1;
			break;
		case 'n':
			o->no_block = 1;
			break;
		case 'h':
			cli_usage(stdout);
			exit(0);
		default:
			return cli_usage_error("unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("dump: missing PID");
	if (optind + 1 < argc)
		return cli_usage_error("dump: unexpected argument '%s'",
				       argv[optind + 1]);
	if (parse_pid(argv[optind], &o->pid) < 0)
		return cli_usage_error("dump: '%s' is not a process id",
				       argv[optind]);
	return 0;
}

/* The process's short name, for messages ("sleep"). */
static void comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Give the library's message the context only the command knows. */
static void explain(struct cs_err *err, struct memsrc *ms, int pid)
{
	char comm[64];
	struct strbuf msg;

	if (err->code == CS_ERR_NOT_PYTHON) {
		comm_of(pid, comm, sizeof(comm));
		strbuf_init(&msg);
		strbuf_addf(&msg, "process %d (%s) is not a Python process: %s",
			    pid, comm, err->msg);
		cs_refail(err, CS_ERR_NOT_PYTHON, "%.*s",
			  (int)sizeof(err->msg) - 1, msg.buf);
		strbuf_release(&msg);
	} else if (ms && err->code != CS_ERR_EXITED && !live_alive(ms)) {
		cs_refail(err, CS_ERR_EXITED,
			  "process %d exited while being read", pid);
	}
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	struct py_stack_options sopt;
	struct py_snapshot snap;
	struct memsrc *ms = NULL;
	struct pyproc py;
	struct report r;
	struct cs_err err;
	double start = now_ms();
	char *command = NULL;
	int ret, located = 0;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	cs_err_init(&err);
	memset(&snap, 0, sizeof(snap));
	ret = live_open(&ms, o.pid, &err);
	if (ret == 0) {
		command = live_cmdline(o.pid);
		ret = pyproc_locate(&py, ms, &err);
		located = 1;
	}
	if (ret == 0 && !o.no_block) {
		live_install_signal_guard();
		ret = live_stop(ms, &err);
	}
	if (ret == 0) {
		sopt.locals = o.locals;
		ret = py_snapshot_take(&py, &sopt, &snap, &err);
	}
	if (ms)
		live_resume(ms);
	if (ret < 0) {
		explain(&err, ms, o.pid);
	} else {
		memset(&r, 0, sizeof(r));
		r.pid = o.pid;
		r.command = command;
		r.py = &py;
		r.snap = &snap;
		r.locals = o.locals;
		r.pause_ms = live_paused_ms(ms);
		r.stats = &ms->stats;
		r.wall_ms = now_ms() - start;
		if (o.json)
			report_json(stdout, &r);
		else
			report_text(stdout, &r);
	}
	py_snapshot_release(&snap);
	if (located)
		pyproc_release(&py);
	if (ms)
		memsrc_free(ms);
	free(command);
	if (fflush(stdout) != 0 && ret == 0) {
		cs_fail(&err, CS_ERR_INTERNAL, "cannot write output: %s",
			strerror(errno));
		ret = -CS_ERR_INTERNAL;
	}
	return ret < 0 ? cli_report_error(&err) : 0;
}
