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
#include "cli/watch_blocked.h"
#include "cli/watch_failed.h"
#include "cli/watch_track.h"
#include "cli/watch_json.h"
#include "cli/watch_view.h"
#include "common/duration.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

struct watch_options {
	long long interval_ms, for_ms, stuck_ms;   /* for_ms 0: no end */
	int json;
	int all;                   /* --all: alike lines not grouped */
	struct collect_options collect;
	int pid;
};

/* A sample that takes longer than this is still followed by one. */
#define WATCH_MIN_INTERVAL_MS 10
#define WATCH_PROBE_MAX_MS 50.0

enum { OPT_ALL = CLI_OPT_OWN_FIRST };

static int parse_options(int argc, char **argv, struct watch_options *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "for", required_argument, NULL, 'f' },
		{ "stuck", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-block", no_argument, NULL, 'n' },
		{ "native", no_argument, NULL, 'N' },
		{ "all", no_argument, NULL, OPT_ALL },
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
	       (c = getopt_long(argc, argv, "i:f:s:jnh", longopts, NULL)) != -1) {
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
		case OPT_ALL:
			o->all = 1;
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

struct event_out {
	struct watch_view *view;
	FILE *out;
};

static void put_event(const char *line, void *arg)
{
	struct event_out *e = arg;

	if (e->view) {
		watch_view_event(e->view, line);
	} else {
		fprintf(e->out, "%s\n", line);
		fflush(e->out);
	}
}

static void print_events(const struct watch_tracker *t, struct watch_view *view,
			 FILE *out, int all)
{
	struct event_out e = { view, out };

	watch_format_events(t, all, put_event, &e);
}

/* One watch, from its first sample to its summary. */
struct watch_session {
	const struct watch_options *o;
	struct watch_tracker t;
	struct watch_info info;
	struct watch_view *view;
	struct watch_cpu tables[2];
	struct watch_failed failed;  /* the failures said */
	struct watch_cpu *before, *now;
	char *command, *python, *last_error;
	double start, probe_ms;
	double sampled_at;         /* when the last sample began */
	int want_view, seen_one;
	int status;                /* exit status of a first sample that
				      failed */
};

enum sample_result { SAMPLE_GO_ON, SAMPLE_TARGET_EXITED, SAMPLE_FAILED };

static void session_init(struct watch_session *w, const struct watch_options *o)
{
	memset(w, 0, sizeof(*w));
	w->o = o;
	w->before = &w->tables[0];
	w->now = &w->tables[1];
	w->want_view = !o->json && isatty(STDOUT_FILENO);
	w->info.pid = o->pid;
	w->info.interval_s = (double)o->interval_ms / 1000;
	w->info.stuck_s = (double)o->stuck_ms / 1000;
	w->info.apart = o->all;
	watch_tracker_init(&w->t, w->info.stuck_s);
	watch_failed_init(&w->failed);
	/* a tenth of the interval, at most 50 ms, watching for wake-ups */
	w->probe_ms = (double)o->interval_ms / 10;
	if (w->probe_ms > WATCH_PROBE_MAX_MS)
		w->probe_ms = WATCH_PROBE_MAX_MS;
	w->start = cs_now_ms();
}

static void session_release(struct watch_session *w)
{
	watch_tracker_release(&w->t);
	watch_failed_release(&w->failed);
	watch_cpu_release(&w->tables[0]);
	watch_cpu_release(&w->tables[1]);
	free(w->command);
	free(w->python);
	free(w->last_error);
}

/* A collection that read: feed it to the tracker and say what changed. */
static void session_feed(struct watch_session *w, struct collection *c)
{
	w->seen_one = 1;
	if (!w->python) {
		w->python = xstrdup(c->py.version);
		w->command = c->command ? xstrdup(c->command) : NULL;
		w->info.python = w->python;
		w->info.command = w->command;
	}
	watch_feed(&w->t, (w->now->at_ms - w->start) / 1000, c, w->before,
		   w->now, w->probe_ms);
	watch_note_blocked(&w->t, c);
	if (w->want_view && !w->view)
		w->view = watch_view_open();
	print_events(&w->t, w->view, w->o->json ? stderr : stdout, w->o->all);
	{
		struct event_out e = { w->view,
				       w->o->json ? stderr : stdout };

		watch_failed_events(&w->failed, c, put_event, &e);
	}
}

/* One sample.  Only a failing first sample fails the watch (w->status):
 * there is nothing to watch. */
static enum sample_result session_sample(struct watch_session *w)
{
	struct collect_options opt = w->o->collect;
	struct collection c;
	struct cs_err err;
	int ret;

	cs_err_init(&err);
	watch_cpu_read(w->now, w->o->pid);
	w->sampled_at = w->now->at_ms;
	/* before our first stop, how long each thread had slept: time
	 * without progress already (later stops make them run) */
	opt.off_cpu = !w->seen_one;
	ret = collect_live(&c, w->o->pid, &opt, &err);
	if (ret < 0 && !w->seen_one) {
		collection_release(&c);
		w->status = cli_report_error(&err);
		return SAMPLE_FAILED;
	}
	if (ret < 0 && target_gone(&err, w->o->pid)) {
		w->info.target_exited = 1;
		collection_release(&c);
		return SAMPLE_TARGET_EXITED;
	}
	if (ret >= 0 && c.heap_unread) {
		/* The threads were read but not the heap (a walk that met
		 * the target's lists mid-change, or a slow read): what it
		 * holds is not gone, this sample did not see it. */
		ret = -1;
		cs_err_init(&err);
		cs_fail(&err, CS_ERR_MEMORY, "%s",
			c.heap_unread <= c.warnings.n ?
			c.warnings.v[c.heap_unread - 1].text :
			"tasks and generators not read");
	}
	if (ret < 0) {
		/* a racy --no-block read, most likely: the next sample may
		 * read fine */
		w->info.samples_failed++;
		free(w->last_error);
		w->last_error = xstrdup(err.msg);
		w->info.last_error = w->last_error;
	} else {
		session_feed(w, &c);
	}
	collection_release(&c);
	/* the next window starts now: the target is running again */
	{
		struct watch_cpu *tmp = w->before;

		w->before = w->now;
		w->now = tmp;
	}
	watch_cpu_read(w->before, w->o->pid);
	w->info.elapsed_s = (cs_now_ms() - w->start) / 1000;
	if (w->view)
		watch_view_draw(w->view, &w->t, &w->info);
	return SAMPLE_GO_ON;
}

/*
 * When to take sample k + 1 (ticks missed by a slow sample are skipped;
 * *k moves past them), or a negative value when --for has ended with the
 * last sample.
 */
static double session_next(const struct watch_session *w, long long *k)
{
	const struct watch_options *o = w->o;
	double interval = (double)o->interval_ms, next;

	next = w->start + (double)(*k + 1) * interval;
	if (next < cs_now_ms()) {
		*k = (long long)((cs_now_ms() - w->start) / interval);
		next = w->start + (double)(*k + 1) * interval;
	}
	/* --for ends with a sample at its end, so the summary tells the
	 * state then, whatever the samples' pace */
	if (o->for_ms && w->sampled_at - w->start >= (double)o->for_ms)
		return -1;
	if (o->for_ms && next - w->start > (double)o->for_ms)
		next = w->start + (double)o->for_ms;
	/* Leave the target half an interval to itself: the kernel's
	 * accounting over a window of a few milliseconds cannot tell a
	 * blocked thread from one that sleeps in short steps. */
	if (next < w->before->at_ms + interval / 2)
		next = w->before->at_ms + interval / 2;
	return next;
}

static int session_summary(struct watch_session *w)
{
	w->info.elapsed_s = (cs_now_ms() - w->start) / 1000;
	watch_view_close(w->view);
	w->view = NULL;       /* closed: the summary goes to the terminal */
	if (w->o->json)
		watch_summary_json(stdout, &w->t, &w->info);
	else
		watch_summary_text(stdout, &w->t, &w->info);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "coroscope: cannot write output: %s\n",
			strerror(errno));
		return CS_ERR_INTERNAL;
	}
	return 0;
}

/* SIGINT, SIGTERM and SIGHUP as a descriptor: they end the watch with
 * its summary.  -1 when that cannot be set up. */
static int ending_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

int cmd_watch(int argc, char **argv)
{
	struct watch_options o;
	struct watch_session w;
	enum sample_result r;
	double next;
	int ret, sfd;
	long long k;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	sfd = ending_signals();
	if (sfd < 0) {
		fprintf(stderr, "coroscope: cannot set up signals: %s\n",
			strerror(errno));
		return CS_ERR_INTERNAL;
	}
	session_init(&w, &o);
	for (k = 0;; k++) {
		r = session_sample(&w);
		if (r == SAMPLE_FAILED) {
			ret = w.status;
			goto out;
		}
		if (r == SAMPLE_TARGET_EXITED)
			break;
		next = session_next(&w, &k);
		if (next < 0 || wait_until(sfd, w.view, next, &w.t, &w.info))
			break;
	}
	ret = session_summary(&w);
out:
	close(sfd);
	watch_view_close(w.view);
	session_release(&w);
	return ret;
}
