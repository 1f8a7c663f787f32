/*
 * coroscope run [--timeout D] [--report FILE] [--kill-after D]
 *               [--sample-last D] -- COMMAND...
 *
 * Runs COMMAND in a process group of its own and waits for it.  When it
 * outlives the timeout, every process of its tree is dumped (the Python
 * ones in full, the others by pid, parent and command line), the report
 * leads with the likely causes of the hang, and the whole tree is
 * stopped: SIGTERM, then SIGKILL after --kill-after.  SIGUSR1 takes the
 * same dump without stopping anything.
 *
 * In the last part of the timeout (--sample-last) the tree is sampled as
 * `coroscope watch` samples a process (cli/run_sample.h), the dump at
 * the timeout being the last sample: the report then says how long each
 * task and thread made no progress, and which threads were busy.
 *
 * The command should not notice the wrapper: its standard streams,
 * environment, signal mask and dispositions are coroscope's own, and
 * with a terminal its group is made the foreground one.  coroscope waits
 * with every signal it cares about blocked and taken by sigtimedwait(),
 * so a signal never interrupts a dump (a target is always resumed before
 * a SIGTERM to coroscope is acted on).
 *
 * The tree is found from /proc: coroscope's descendants (coroscope is a
 * child subreaper, so orphans that double-forked or called setsid() stay
 * its descendants), the members of the command's process group, and any
 * process seen in the tree before that is still the same process.
 */
#include "cli/commands.h"
#include "cli/options.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "attach/live.h"
#include "cli/collect.h"
#include "cli/escape.h"
#include "cli/run_cancelled.h"
#include "cli/run_causes.h"
#include "cli/run_graph.h"
#include "cli/run_pool.h"
#include "cli/run_probe.h"
#include "cli/run_report.h"
#include "cli/run_sample.h"
#include "cli/run_stopped.h"
#include "cli/run_supervise.h"
#include "cli/run_reads.h"
#include "cli/run_failed.h"
#include "cli/run_idle_loops.h"
#include "cli/run_serves.h"
#include "cli/run_semlocks.h"
#include "cli/run_sleeps.h"
#include "cli/run_sqlite.h"
#include "cli/run_writes.h"
#include "common/addrmap.h"
#include "common/duration.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define DEFAULT_KILL_AFTER_MS 5000
/* --sample-last by default: half the timeout, at most this. */
#define DEFAULT_SAMPLE_LAST_MS 10000

/* The sampled part of the timeout: --sample-last, cut to the timeout. */
static long long sample_window(const struct run_options *o)
{
	long long ms = o->sample_last_ms;

	if (o->timeout_ms <= 0)
		return 0;
	if (ms < 0) {
		ms = o->timeout_ms / 2;
		if (ms > DEFAULT_SAMPLE_LAST_MS)
			ms = DEFAULT_SAMPLE_LAST_MS;
	}
	return ms > o->timeout_ms ? o->timeout_ms : ms;
}

/* ---- options ---- */

enum { OPT_NO_SOURCE = CLI_OPT_OWN_FIRST, OPT_SAMPLE_LAST, OPT_ALL };

static int parse_options(int argc, char **argv, struct run_options *o)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "report", required_argument, NULL, 'r' },
		{ "kill-after", required_argument, NULL, 'k' },
		{ "no-native", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
		{ "sample-last", required_argument, NULL, OPT_SAMPLE_LAST },
		{ "all", no_argument, NULL, OPT_ALL },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->kill_after_ms = DEFAULT_KILL_AFTER_MS;
	o->sample_last_ms = -1;
	opterr = 0;
	optind = 1;
	/* "+": the first word that is not an option starts the command, so
	 * the command's own options are never taken for run's; ":" tells a
	 * missing value from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:t:r:k:Nh", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			ret = cli_parse_duration("run", "--timeout", optarg,
						    &o->timeout_ms);
			if (ret)
				return ret;
			break;
		case 'k':
			ret = cli_parse_duration("run", "--kill-after", optarg,
						    &o->kill_after_ms);
			if (ret)
				return ret;
			break;
		case 'r':
			if (!*optarg)
				return cli_usage_error("run: --report needs a file name");
			o->report = optarg;
			break;
		case 'N':
			o->no_native = 1;
			break;
		case OPT_NO_SOURCE:
			o->no_source = 1;
			break;
		case OPT_ALL:
			o->all = 1;
			break;
		case OPT_SAMPLE_LAST:
			ret = cli_parse_duration("run", "--sample-last", optarg,
						    &o->sample_last_ms);
			if (ret)
				return ret;
			break;
		case 'h':
			cli_usage(stdout);
			exit(0);
		case ':':
			return cli_usage_error("run: option '%s' needs a value",
					       argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error("run: missing COMMAND");
	o->argv = argv + optind;
	return 0;
}

/*
 * A report that cannot be written must be said at once, not after the
 * whole timeout: open path for writing as the dump will (an existing
 * file without truncating it; a new one is created and removed again).
 */
static int check_writable(const char *what, const char *path)
{
	int fd, created = 0;

	fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY |
			  O_CLOEXEC, 0666);
		created = fd >= 0;
	}
	if (fd < 0) {
		fprintf(stderr, "coroscope: run: cannot write %s '", what);
		esc_text(stderr, path);
		fprintf(stderr, "': %s\n", strerror(errno));
		return CS_ERR_USAGE;
	}
	close(fd);
	if (created)
		unlink(path);
	return 0;
}

static int check_outputs(const struct run_options *o)
{
	const char *gh = getenv("GITHUB_STEP_SUMMARY");
	int ret = 0;

	if (o->report)
		ret = check_writable("the --report file", o->report);
	if (!ret && gh && *gh)
		ret = check_writable("GITHUB_STEP_SUMMARY", gh);
	return ret;
}

/* ---- the dump ---- */

/* A hang report is a one-off, and the C layer is often the answer: its
 * native frames come with it unless --no-native. */
static void dump_one(struct run_proc *p, const struct run_options *o,
		     struct run_sampler *smp)
{
	struct collect_options copt;
	struct run_sampled *sp;

	cs_err_init(&p->err);
	p->command = live_cmdline(p->e.pid);
	if (p->e.state == 'Z') {
		cs_fail(&p->err, CS_ERR_EXITED,
			"process %d exited; its parent has not collected it",
			p->e.pid);
		return;
	}
	memset(&copt, 0, sizeof(copt));
	copt.native = !o->no_native;
	copt.no_source = o->no_source;
	copt.expand_all = o->all;
	/* while sampling, the dump is the last sample */
	sp = run_sampler_begin(smp, &p->e);
	if (collect_live(&p->c, p->e.pid, &copt, &p->err) == 0) {
		p->dumped = 1;
		/* read through a live thread when the main one has exited */
		if (!p->command && p->c.command)
			p->command = xstrdup(p->c.command);
		run_sampler_end(smp, sp, &p->c);
		return;
	}
	run_sampler_end(smp, sp, NULL);
	collection_release(&p->c);
}

/* procs[i]'s parent's collection, when dumped, or NULL. */
static const struct collection *dumped_parent(const struct run_proc *procs,
					      size_t n, size_t i)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (procs[j].e.pid == procs[i].e.ppid)
			return procs[j].dumped ? &procs[j].c : NULL;
	return NULL;
}

/* all: --all, alike threads a cause each. */
static void summarize(struct run_summary *sum, struct run_proc *procs,
		      size_t n, const struct run_sampler *smp, int all)
{
	struct run_thread_facts *facts;
	size_t i;

	run_summary_init(sum);
	sum->apart = all;
	sum->procs = procs;
	sum->nprocs = n;
	run_summarize_stopped(sum, procs, n);
	for (i = 0; i < n; i++) {
		const struct collection *c = &procs[i].c;
		const struct watch_tracker *t;
		struct run_pool_job *jobs;
		struct addrmap explained;

		if (!procs[i].dumped)
			continue;
		t = run_sampler_tracker(smp, c->pid);
		facts = run_probe_threads(c);
		/* The graph's causes first: the tasks they name are no
		 * stuck tasks besides (the order of causes of different
		 * kinds is the sort's). */
		addrmap_init(&explained);
		sum->facts = facts;
		/* (the graph's causes name its child processes' jobs) */
		sum->njobs = run_pool_jobs(procs, n, c->pid, &jobs);
		sum->jobs = jobs;
		sum->parent = dumped_parent(procs, n, i);
		run_semlocks_facts(facts, sum, c);
		run_summarize_graph(sum, c, t, &explained);
		sum->explained = &explained;
		sum->graph = &c->graph;
		sum->greenlets = &c->greenlets;
		sum->clock_s = c->clock_s;
		sum->proc_pid = collect_proc_pid(c);
		run_summarize(sum, c->pid, &c->snap, &c->async, facts, t);
		run_summarize_greenlets(sum, c->pid, &c->greenlets, t);
		run_summarize_writes(sum, c);
		run_summarize_reads(sum, c, t);
		run_summarize_sqlite(sum, c, t);
		run_summarize_sleeps(sum, c, t);
		/* (reads the server's socket from the dump's copy) */
		run_summarize_serves(sum, &procs[i].c, t);
		run_summarize_idle_loops(sum, &procs[i].c, t);
		run_summarize_failed(sum, c);
		run_summarize_cancelled(sum, c, t);
		sum->explained = NULL;
		sum->graph = NULL;
		sum->greenlets = NULL;
		sum->clock_s = 0;
		sum->proc_pid = 0;
		sum->facts = NULL;
		free(jobs);
		sum->jobs = NULL;
		sum->njobs = 0;
		sum->parent = NULL;
		addrmap_release(&explained);
		run_probe_release(facts, c->snap.nthreads);
	}
	run_summary_sort(sum);
}

/*
 * Dump every process of the tree: the text report on stderr, the JSON
 * file with --report, the step summary under GitHub Actions.  Each
 * process is stopped only while it is read; the tree runs on.
 */
static void dump_tree(struct run_state *st, int timed_out,
		      struct run_sampler *smp)
{
	struct proc_list tree = { 0 };
	struct run_summary sum;
	struct run_proc *procs;
	struct run_dump d;
	struct strbuf why;
	const char *gh;
	size_t i, npy = 0;
	char after[32];

	run_tree_now(st, &tree);
	procs = xcalloc(tree.n ? tree.n : 1, sizeof(*procs));
	for (i = 0; i < tree.n; i++) {
		procs[i].e = tree.e[i];
		dump_one(&procs[i], st->o, smp);
		npy += procs[i].dumped;
	}
	/* A dump of the command may have taken its exit status. */
	run_reap(st);
	summarize(&sum, procs, tree.n, smp, st->o->all);

	strbuf_init(&why);
	if (timed_out) {
		duration_format(st->o->timeout_ms, after, sizeof(after));
		strbuf_addf(&why, "command timed out after %s", after);
	} else {
		strbuf_addstr(&why, "SIGUSR1: snapshot of the running command");
	}
	d = (struct run_dump){ .why = why.buf, .timed_out = timed_out,
			       .argv = st->o->argv, .procs = procs,
			       .all = st->o->all,
			       .n = tree.n, .npy = npy, .sum = &sum,
			       .sampler = run_sampler_started(smp) ? smp : NULL };
	run_report_text(stderr, &d);
	if (st->o->report)
		run_report_json(st->o->report, &d);
	gh = getenv("GITHUB_STEP_SUMMARY");
	if (gh && *gh)
		run_report_step_summary(gh, &d);

	for (i = 0; i < tree.n; i++) {
		if (procs[i].dumped)
			collection_release(&procs[i].c);
		free(procs[i].command);
	}
	free(procs);
	run_summary_release(&sum);
	strbuf_release(&why);
	proc_list_release(&tree);
}

/* ---- watching the command ---- */

/*
 * Every signal run handles is blocked for good and taken with
 * sigtimedwait(): SIGCHLD (the command ended), SIGUSR1 (dump), the ones
 * forwarded to the command, and those a terminal or a closed pipe would
 * send coroscope while it handles the terminal or writes the report.
 */
static void take_signals(sigset_t *set, sigset_t *oldmask,
			 struct sigaction *oldchld)
{
	struct sigaction dfl;

	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	sigaddset(set, SIGTTOU);
	sigaddset(set, SIGTTIN);
	sigaddset(set, SIGPIPE);
	sigprocmask(SIG_BLOCK, set, oldmask);
	/* An inherited SIG_IGN would make the kernel reap the command
	 * itself and lose its status. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGCHLD, &dfl, oldchld);
}

/* One sample of the whole tree (see cli/run_sample.h). */
static void sample_tree(struct run_state *st, struct run_sampler *smp)
{
	struct proc_list tree = { 0 };

	run_tree_now(st, &tree);
	run_sampler_tick(smp, &tree);
	proc_list_release(&tree);
}

/* Until the command ends or times out: 1 when it timed out.  In the
 * last part of the timeout, the tree is sampled every interval. */
static int watch(struct run_state *st, const sigset_t *set,
		 struct run_sampler *smp)
{
	double deadline = 0, next_sample = 0, left, now, gap;
	long long window = sample_window(st->o);
	int sig;

	if (st->o->timeout_ms > 0)
		deadline = cs_now_ms() + (double)st->o->timeout_ms;
	if (deadline && window > 0)
		next_sample = deadline - (double)window;
	while (!st->child_done) {
		left = -1;
		if (deadline) {
			now = cs_now_ms();
			left = deadline - now;
			if (left <= 0) {
				/* The command may have ended just now. */
				run_reap(st);
				return !st->child_done;
			}
			if (next_sample && now >= next_sample) {
				sample_tree(st, smp);
				/* The dump comes a whole window after the
				 * first samples, even ones taken a little
				 * late: "stuck for at least D" then holds. */
				if (smp->ticks == 1 &&
				    smp->first_ms + (double)window > deadline)
					deadline = smp->first_ms + (double)window;
				/* the next tick; leave the target half an
				 * interval to itself after a slow sample,
				 * and a few times as long as it was stopped */
				next_sample += smp->interval_ms;
				now = cs_now_ms();
				gap = smp->interval_ms / 2;
				if (gap < RUN_SAMPLE_RUN_PER_PAUSE * smp->pause_ms)
					gap = RUN_SAMPLE_RUN_PER_PAUSE * smp->pause_ms;
				if (next_sample < now + gap)
					next_sample = now + gap;
				left = deadline - now;
			}
			if (next_sample && next_sample - now < left)
				left = next_sample - now;
			if (left < 0)
				left = 0;
		}
		sig = run_wait_signal(set, left);
		switch (sig) {
		case SIGCHLD:
			if (run_reap(st))
				run_follow_stop(st);
			break;
		case SIGUSR1:
			dump_tree(st, 0, smp);
			break;
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
		case SIGQUIT:
			run_forward_signal(st, sig);
			break;
		default:
			break;
		}
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_options o;
	struct run_state st;
	struct run_sampler smp;
	struct sigaction oldchld;
	sigset_t set, oldmask;
	int ret, exec_errno, timed_out;

	ret = parse_options(argc, argv, &o);
	if (!ret)
		ret = check_outputs(&o);
	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	st.o = &o;
	st.self = (int)getpid();
	take_signals(&set, &oldmask, &oldchld);
	/* Adopt orphans of the tree, so that none escapes the walk. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	st.tty_fd = run_foreground_tty();
	st.child = run_start_command(&st, &oldmask, &oldchld, &exec_errno);
	if (st.child < 0) {
		fprintf(stderr, "coroscope: cannot run '%s': %s\n", o.argv[0],
			strerror(exec_errno));
		return exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE;
	}
	run_sampler_init(&smp, sample_window(&o));
	timed_out = watch(&st, &set, &smp);
	if (timed_out) {
		dump_tree(&st, 1, &smp);
		run_terminate_tree(&st, &set);
	}
	run_sampler_release(&smp);
	if (st.tty_fd >= 0)
		tcsetpgrp(st.tty_fd, getpgrp());
	proc_list_release(&st.known);
	return run_exit_status(&st, timed_out);
}
