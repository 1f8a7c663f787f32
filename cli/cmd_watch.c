/*
 * coroscope watch PID: sample the process every interval with the same
 * pipeline as dump, follow each task, thread, generator no task owns
 * and greenlet across samples (cli/watch_track.c), say when one has made
 * no progress for longer than --stuck and when it moves again, and end
 * with a summary.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked for the whole watch
 * and read from a signalfd between samples, so they never interrupt a
 * sample (the target is always resumed before we look at them); they end
 * the watch with the summary.  SIGQUIT keeps live.c's guard, which
 * detaches a stopped target before coroscope dies.
 */
#include "cli/commands.h"
#include "cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/collect.h"
#include "cli/watch_sample.h"
#include "cli/watch_track.h"
#include "cli/watch_view.h"
#include "common/duration.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

struct watch_options {
	long long interval_ms, for_ms, stuck_ms;   /* for_ms 0: no end */
	int json;
	struct collect_options collect;
	int pid;
};

/* A sample that takes longer than this is still followed by one. */
#define WATCH_MIN_INTERVAL_MS 10
#define WATCH_PROBE_MAX_MS 50.0

static int parse_options(int argc, char **argv, struct watch_options *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "for", required_argument, NULL, 'f' },
		{ "stuck", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-block", no_argument, NULL, 'n' },
		{ "native", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->interval_ms = 1000;
	o->stuck_ms = 10000;
	opterr = 0;
	optind = 1;
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, "+i:f:s:jnh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ret = cli_parse_duration("watch", "--interval", optarg,
						 &o->interval_ms);
			if (ret == 0 && o->interval_ms < WATCH_MIN_INTERVAL_MS)
				ret = cli_usage_error("watch: --interval must be at least %dms",
						      WATCH_MIN_INTERVAL_MS);
			break;
		case 'f':
			ret = cli_parse_duration("watch", "--for", optarg, &o->for_ms);
			if (ret == 0 && o->for_ms <= 0)
				ret = cli_usage_error("watch: --for must be longer than 0s");
			break;
		case 's':
			ret = cli_parse_duration("watch", "--stuck", optarg, &o->stuck_ms);
			break;
		case 'j':
			o->json = 1;
			break;
		case 'n':
			o->collect.no_block = 1;
			break;
		case 'N':
			/* what a stuck thread is blocked in, in C */
			o->collect.native = 1;
			break;
		case 'h':
			cli_usage(stdout);
			exit(0);
		default:
			if (optopt == 'i' || optopt == 'f' || optopt == 's')
				return cli_usage_error("watch: -%c needs a duration",
						       optopt);
			return cli_usage_error("unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (ret)
		return ret;
	if (optind >= argc)
		return cli_usage_error("watch: missing PID");
	if (optind + 1 < argc)
		return cli_usage_error("watch: unexpected argument '%s'",
				       argv[optind + 1]);
	if (cli_parse_pid(argv[optind], &o->pid) < 0)
		return cli_usage_error("watch: '%s' is not a process id",
				       argv[optind]);
	return 0;
}

/* ---- the loop ---- */

/* Wait until the monotonic time `until` (ms): 1 when a signal or the
 * user (q) asked to stop, 0 when the time came. */
static int wait_until(int sfd, struct watch_view *view, double until,
		      const struct watch_tracker *t,
		      const struct watch_info *info)
{
	for (;;) {
		struct pollfd p[2];
		double left = until - cs_now_ms();
		int n = 1, r;

		if (left <= 0)
			return 0;
		p[0].fd = sfd;
		p[0].events = POLLIN;
		p[1].fd = STDIN_FILENO;
		p[1].events = POLLIN;
		/* keys only from a terminal: /dev/null is always readable */
		if (view && isatty(STDIN_FILENO))
			n = 2;
		r = poll(p, (nfds_t)n, (int)ceil(left));
		if (r < 0 && errno != EINTR)
			return 1;
		if (r > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			/* consumed, so that it is not pending at exit */
			ssize_t got = read(sfd, &si, sizeof(si));

			(void)got;
			return 1;
		}
		if (n == 2 && r > 0 &&
		    (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)))
			view = NULL;    /* no keyboard: watch the clock only */
		/* a resize interrupts poll (EINTR): let the view see it */
		if (view && watch_view_keys(view, t, info))
			return 1;
	}
}

static int target_gone(const struct cs_err *err, int pid)
{
	if (err->code == CS_ERR_NO_PROCESS || err->code == CS_ERR_EXITED)
		return 1;
	return kill(pid, 0) < 0 && errno == ESRCH;
}

static void print_events(const struct watch_tracker *t, struct watch_view *view,
			 FILE *out)
{
	char line[1024];
	size_t i;

	for (i = 0; i < t->nevents; i++) {
		watch_format_event(line, sizeof(line), t, &t->events[i]);
		if (view) {
			watch_view_event(view, line);
		} else {
			fprintf(out, "%s\n", line);
			fflush(out);
		}
	}
}

int cmd_watch(int argc, char **argv)
{
	struct watch_options o;
	struct watch_tracker t;
	struct watch_info info;
	struct watch_view *view = NULL;
	struct watch_cpu tables[2];
	struct watch_cpu *before = &tables[0], *now = &tables[1];
	char *command = NULL, *python = NULL, *last_error = NULL;
	double start, next, sampled_at, probe_ms;
	sigset_t set;
	int ret, sfd, want_view, seen_one = 0;
	long long k;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "coroscope: cannot set up signals: %s\n",
			strerror(errno));
		return CS_ERR_INTERNAL;
	}
	want_view = !o.json && isatty(STDOUT_FILENO);
	memset(tables, 0, sizeof(tables));
	memset(&info, 0, sizeof(info));
	info.pid = o.pid;
	info.interval_s = (double)o.interval_ms / 1000;
	info.stuck_s = (double)o.stuck_ms / 1000;
	watch_tracker_init(&t, info.stuck_s);
	/* a tenth of the interval, at most 50 ms, watching for wake-ups */
	probe_ms = (double)o.interval_ms / 10;
	if (probe_ms > WATCH_PROBE_MAX_MS)
		probe_ms = WATCH_PROBE_MAX_MS;
	start = cs_now_ms();
	for (k = 0;; k++) {
		struct collection c;
		struct cs_err err;

		cs_err_init(&err);
		watch_cpu_read(now, o.pid);
		sampled_at = now->at_ms;
		ret = collect_live(&c, o.pid, &o.collect, &err);
		if (ret < 0 && !seen_one) {
			collection_release(&c);
			ret = cli_report_error(&err);
			goto out;
		}
		if (ret < 0 && target_gone(&err, o.pid)) {
			info.target_exited = 1;
			collection_release(&c);
			break;
		}
		if (ret < 0) {
			/* a racy --no-block read, most likely: the next
			 * sample may read fine */
			info.samples_failed++;
			free(last_error);
			last_error = xstrdup(err.msg);
			info.last_error = last_error;
		} else {
			seen_one = 1;
			if (!python) {
				python = xstrdup(c.py.version);
				command = c.command ? xstrdup(c.command) : NULL;
				info.python = python;
				info.command = command;
			}
			watch_feed(&t, (now->at_ms - start) / 1000, &c, before,
				   now, probe_ms);
			if (want_view && !view)
				view = watch_view_open();
			print_events(&t, view, o.json ? stderr : stdout);
		}
		collection_release(&c);
		/* the next window starts now: the target is running again */
		{
			struct watch_cpu *tmp = before;

			before = now;
			now = tmp;
		}
		watch_cpu_read(before, o.pid);
		info.elapsed_s = (cs_now_ms() - start) / 1000;
		if (view)
			watch_view_draw(view, &t, &info);
		/* the next tick; ticks missed by a slow sample are skipped */
		next = start + (double)(k + 1) * (double)o.interval_ms;
		if (next < cs_now_ms()) {
			k = (long long)((cs_now_ms() - start) / (double)o.interval_ms);
			next = start + (double)(k + 1) * (double)o.interval_ms;
		}
		/* --for ends with a sample at its end, so the summary tells
		 * the state then, whatever the samples' pace */
		if (o.for_ms && sampled_at - start >= (double)o.for_ms)
			break;
		if (o.for_ms && next - start > (double)o.for_ms)
			next = start + (double)o.for_ms;
		/* Leave the target half an interval to itself: the kernel's
		 * accounting over a window of a few milliseconds cannot tell
		 * a blocked thread from one that sleeps in short steps. */
		if (next < before->at_ms + (double)o.interval_ms / 2)
			next = before->at_ms + (double)o.interval_ms / 2;
		if (wait_until(sfd, view, next, &t, &info))
			break;
	}
	info.elapsed_s = (cs_now_ms() - start) / 1000;
	watch_view_close(view);
	if (o.json)
		watch_summary_json(stdout, &t, &info);
	else
		watch_summary_text(stdout, &t, &info);
	ret = 0;
	if (fflush(stdout) != 0) {
		fprintf(stderr, "coroscope: cannot write output: %s\n",
			strerror(errno));
		ret = CS_ERR_INTERNAL;
	}
out:
	close(sfd);
	watch_tracker_release(&t);
	watch_cpu_release(&tables[0]);
	watch_cpu_release(&tables[1]);
	free(command);
	free(python);
	free(last_error);
	return ret;
}
