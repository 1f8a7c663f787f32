/*
 * coroscope run [--timeout D] [--report FILE] [--kill-after D] -- COMMAND...
 *
 * Runs COMMAND in a process group of its own and waits for it.  When it
 * outlives the timeout, every process of its tree is dumped (the Python
 * ones in full, the others by pid, parent and command line), the report
 * leads with the likely causes of the hang, and the whole tree is
 * stopped: SIGTERM, then SIGKILL after --kill-after.  SIGUSR1 takes the
 * same dump without stopping anything.
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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "attach/live.h"
#include "cli/collect.h"
#include "cli/json.h"
#include "cli/report.h"
#include "cli/run_summary.h"
#include "common/duration.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define DEFAULT_KILL_AFTER_MS 5000
/* After SIGKILL, how long to wait for the tree to be gone. */
#define KILL_WAIT_MS 5000
/* How often to look at the tree while it dies (only direct children
 * report their end with SIGCHLD). */
#define POLL_MS 20
/* Bounds on the walks over /proc. */
#define MAX_PROCS (1 << 22)
#define MAX_TREE 4096
#define MAX_REAP 100000
/* The step summary stays short: the full report is in the log. */
#define MD_MAX_PROCS 20
#define MD_MAX_THREADS 10

/* Exit statuses of timeout(1), which run follows. */
#define EXIT_CANNOT_INVOKE 126
#define EXIT_NOT_FOUND 127

struct run_options {
	long long timeout_ms;      /* 0: no timeout */
	long long kill_after_ms;
	const char *report;        /* --report FILE, or NULL */
	char **argv;               /* the command, NULL-terminated */
};

/* One process, from /proc/PID/stat. */
struct proc_entry {
	int pid, ppid, pgid;
	char state;                /* 'R', 'S', 'Z'... */
	unsigned long long start;  /* start time: tells a reused pid apart */
};

struct proc_list {
	struct proc_entry *e;
	size_t n, alloc;
};

struct run_state {
	const struct run_options *o;
	int self;                  /* coroscope's pid */
	int child;                 /* the command; also its process group */
	int tty_fd;                /* the terminal the command owns, or -1 */
	int child_done;
	int status;                /* wait status, once child_done */
	int status_lost;           /* reaped by a tracer wait: unknown */
	struct proc_list known;    /* the tree as last seen */
};

/* A process of a dump, dumped or only listed. */
struct run_proc {
	struct proc_entry e;
	char *command;             /* its command line (owned), or NULL */
	int dumped;                /* c holds a collection */
	struct collection c;
	struct cs_err err;         /* why not, when !dumped */
};

/* ---- options ---- */

static int parse_duration_option(const char *name, const char *arg,
				 long long *ms)
{
	struct cs_err err;

	cs_err_init(&err);
	if (duration_parse(arg, ms, &err) < 0)
		return cli_usage_error("run: %s: %s", name, err.msg);
	return 0;
}

static int parse_options(int argc, char **argv, struct run_options *o)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "report", required_argument, NULL, 'r' },
		{ "kill-after", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->kill_after_ms = DEFAULT_KILL_AFTER_MS;
	opterr = 0;
	optind = 1;
	/* "+": the first word that is not an option starts the command, so
	 * the command's own options are never taken for run's; ":" tells a
	 * missing value from an unknown option. */
	while ((c = getopt_long(argc, argv, "+:t:r:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			ret = parse_duration_option("--timeout", optarg,
						    &o->timeout_ms);
			if (ret)
				return ret;
			break;
		case 'k':
			ret = parse_duration_option("--kill-after", optarg,
						    &o->kill_after_ms);
			if (ret)
				return ret;
			break;
		case 'r':
			if (!*optarg)
				return cli_usage_error("run: --report needs a file name");
			o->report = optarg;
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

/* ---- the process tree, from /proc ---- */

static int read_stat(int pid, struct proc_entry *e)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The name in parentheses may itself hold ") ": the last one ends it. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	if (sscanf(p + 2, "%c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
		   "%*d %*d %*d %*d %*d %*d %llu",
		   &e->state, &e->ppid, &e->pgid, &e->start) != 4)
		return -1;
	return 0;
}

static void proc_list_add(struct proc_list *l, const struct proc_entry *e)
{
	l->e = xgrow(l->e, &l->alloc, l->n + 1, sizeof(*l->e));
	l->e[l->n++] = *e;
}

static void proc_list_release(struct proc_list *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

/* Every process of the system. */
static void scan_procs(struct proc_list *all)
{
	struct proc_entry e;
	struct dirent *d;
	DIR *dir;
	char *end;
	long pid;

	all->n = 0;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((d = readdir(dir)) && all->n < MAX_PROCS) {
		errno = 0;
		pid = strtol(d->d_name, &end, 10);
		if (errno || *end || pid <= 0 || pid > 0x3fffffff)
			continue;
		if (read_stat((int)pid, &e) == 0)
			proc_list_add(all, &e);
	}
	closedir(dir);
}

static int known_same(const struct proc_list *known,
		      const struct proc_entry *e)
{
	size_t i;

	for (i = 0; i < known->n; i++)
		if (known->e[i].pid == e->pid && known->e[i].start == e->start)
			return 1;
	return 0;
}

/* Breadth first from tree->e[*q] on: tree doubles as the queue, in[]
 * marks what all holds that is in the tree already. */
static void add_descendants(struct proc_list *tree,
			    const struct proc_list *all, unsigned char *in,
			    size_t *q)
{
	size_t k;

	for (; *q < tree->n && tree->n < MAX_TREE; (*q)++) {
		int parent = tree->e[*q].pid;

		for (k = 0; k < all->n && tree->n < MAX_TREE; k++) {
			if (in[k] || all->e[k].ppid != parent)
				continue;
			in[k] = 1;
			proc_list_add(tree, &all->e[k]);
		}
	}
}

/*
 * The command's tree now, in tree order (the command, then its
 * descendants breadth first, then whatever else belongs), without
 * coroscope itself.  Zombies are included.  Updates st->known.
 */
static void tree_collect(struct run_state *st, struct proc_list *tree)
{
	struct proc_list all = { 0 };
	unsigned char *in;
	size_t i, pass, q = 0;

	tree->n = 0;
	scan_procs(&all);
	in = xcalloc(all.n ? all.n : 1, 1);
	for (i = 0; i < all.n; i++)
		if (all.e[i].pid == st->self)
			in[i] = 1;
	/*
	 * Seeds in order of importance: the command, coroscope's other
	 * children (orphans it adopted), the command's group, processes
	 * seen in the tree before.  Each seed's subtree is added before
	 * the next seed, so that the listing reads as a tree.
	 */
	for (pass = 0; pass < 4; pass++) {
		for (i = 0; i < all.n && tree->n < MAX_TREE; i++) {
			const struct proc_entry *e = &all.e[i];
			int seed;

			if (in[i])
				continue;
			switch (pass) {
			case 0:
				seed = e->pid == st->child;
				break;
			case 1:
				seed = e->ppid == st->self;
				break;
			case 2:
				seed = e->pgid == st->child;
				break;
			default:
				seed = known_same(&st->known, e);
				break;
			}
			if (!seed)
				continue;
			in[i] = 1;
			proc_list_add(tree, e);
			add_descendants(tree, &all, in, &q);
		}
	}
	free(in);
	proc_list_release(&all);
	st->known.n = 0;
	for (i = 0; i < tree->n; i++)
		proc_list_add(&st->known, &tree->e[i]);
}

/* ---- children ---- */

/*
 * Reap every child that has ended (the command, and orphans adopted as
 * subreaper), noting the command's status.  With a terminal, a stop of
 * the command is reported too (see follow_stop()).
 */
static int reap(struct run_state *st)
{
	int status, n, stopped = 0;
	pid_t r;

	if (!st->child_done) {
		r = waitpid(st->child, &status,
			    WNOHANG | (st->tty_fd >= 0 ? WUNTRACED : 0));
		if (r == st->child) {
			if (WIFSTOPPED(status)) {
				stopped = 1;
			} else {
				st->child_done = 1;
				st->status = status;
			}
		} else if (r < 0 && errno == ECHILD) {
			/* A ptrace wait during a dump took its exit. */
			st->child_done = 1;
			st->status_lost = 1;
		}
	}
	for (n = 0; n < MAX_REAP; n++) {
		r = waitpid(-1, &status, WNOHANG);
		if (r <= 0)
			break;
		if (r == st->child && !st->child_done) {
			st->child_done = 1;
			st->status = status;
		}
	}
	return stopped;
}

/*
 * Job control with a terminal: the command was stopped (^Z), so stop
 * coroscope too, giving the terminal back to coroscope's group for the
 * shell to take; when continued, hand it back and continue the command.
 */
static void follow_stop(struct run_state *st)
{
	tcsetpgrp(st->tty_fd, getpgrp());
	raise(SIGSTOP);
	/* Continued: in the foreground (fg) the command gets the terminal
	 * back; in the background (bg) it runs without it. */
	if (tcgetpgrp(st->tty_fd) == getpgrp())
		tcsetpgrp(st->tty_fd, st->child);
	kill(-st->child, SIGCONT);
}

static void signal_tree(struct run_state *st, const struct proc_list *tree,
			int sig)
{
	int group = !st->child_done;
	size_t i;

	/* The group only while it has members: an empty group's number is
	 * free for the kernel to give to another process. */
	for (i = 0; i < tree->n && !group; i++)
		group = tree->e[i].pgid == st->child;
	if (group)
		kill(-st->child, sig);
	for (i = 0; i < tree->n; i++)
		if (tree->e[i].state != 'Z')
			kill(tree->e[i].pid, sig);
}

static int tree_alive(const struct proc_list *tree)
{
	size_t i;

	for (i = 0; i < tree->n; i++)
		if (tree->e[i].state != 'Z')
			return 1;
	return 0;
}

/* Wait for a signal of set, at most ms (forever when ms < 0): the
 * signal, or 0 when the time ran out. */
static int wait_signal(const sigset_t *set, double ms)
{
	struct timespec ts;
	int sig;

	if (ms < 0) {
		do
			sig = sigwaitinfo(set, NULL);
		while (sig < 0 && errno == EINTR);
		return sig < 0 ? 0 : sig;
	}
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	if (ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 0;
	sig = sigtimedwait(set, NULL, &ts);
	return sig < 0 ? 0 : sig;
}

/*
 * SIGTERM to the whole tree (and SIGCONT, for stopped members), SIGKILL
 * to what is left after --kill-after or at a second SIGINT/SIGTERM, and
 * wait until every process is gone and reaped.
 */
static void terminate_tree(struct run_state *st, const sigset_t *set)
{
	struct proc_list tree = { 0 };
	double term_end, give_up = 0;
	int killing = 0, sig;
	size_t i;
	char when[32];

	duration_format(st->o->kill_after_ms, when, sizeof(when));
	fprintf(stderr, "coroscope: stopping the command: SIGTERM, then "
		"SIGKILL after %s\n", when);
	tree_collect(st, &tree);
	signal_tree(st, &tree, SIGTERM);
	signal_tree(st, &tree, SIGCONT);
	term_end = cs_now_ms() + (double)st->o->kill_after_ms;
	/* Bounded in time: term_end, then KILL_WAIT_MS at most. */
	for (;;) {
		reap(st);
		tree_collect(st, &tree);
		if (!tree.n)
			break;
		if (!killing && tree_alive(&tree) && cs_now_ms() >= term_end)
			killing = 1;
		/* Every round: a process may have forked meanwhile. */
		if (killing)
			signal_tree(st, &tree, SIGKILL);
		/* Killed, or only zombies left whose parents are dying:
		 * either way it cannot take long. */
		if (!give_up && (killing || !tree_alive(&tree)))
			give_up = cs_now_ms() + KILL_WAIT_MS;
		if (give_up && cs_now_ms() >= give_up) {
			for (i = 0; i < tree.n; i++)
				fprintf(stderr, "coroscope: process %d did not "
					"exit\n", tree.e[i].pid);
			break;
		}
		sig = wait_signal(set, POLL_MS);
		/* Asked again to stop: no more patience. */
		if (sig == SIGINT || sig == SIGTERM)
			killing = 1;
	}
	proc_list_release(&tree);
}

/* ---- the dump ---- */

static char *join_argv(char **argv)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_addstr(&sb, argv[i]);
	}
	return strbuf_detach(&sb);
}

static void dump_one(struct run_proc *p)
{
	struct collect_options copt;

	cs_err_init(&p->err);
	p->command = live_cmdline(p->e.pid);
	if (p->e.state == 'Z') {
		cs_fail(&p->err, CS_ERR_EXITED,
			"process %d exited; its parent has not collected it",
			p->e.pid);
		return;
	}
	memset(&copt, 0, sizeof(copt));
	if (collect_live(&p->c, p->e.pid, &copt, &p->err) == 0) {
		p->dumped = 1;
		return;
	}
	collection_release(&p->c);
}

static void text_process(FILE *out, const struct run_proc *p)
{
	fprintf(out, "\n=== process %d (parent %d) ===\n", p->e.pid, p->e.ppid);
	if (p->dumped) {
		report_text(out, &p->c);
		return;
	}
	fprintf(out, "Process %d: %s\n", p->e.pid,
		p->command ? p->command : "?");
	if (p->err.code == CS_ERR_NOT_PYTHON)
		fputs("(not a Python process)\n", out);
	else
		fprintf(out, "(not dumped: %s)\n", p->err.msg);
}

static void json_process(struct json *j, const struct run_proc *p)
{
	json_begin_object(j);
	if (p->dumped) {
		report_json_members(j, &p->c);
		json_key(j, "ppid");
		json_int(j, p->e.ppid);
	} else {
		json_key(j, "pid");
		json_int(j, p->e.pid);
		json_key(j, "ppid");
		json_int(j, p->e.ppid);
		json_key(j, "command");
		json_string(j, p->command);
		json_key(j, "python");
		json_null(j);
		json_key(j, "error");
		json_string(j, p->err.code == CS_ERR_NOT_PYTHON ?
			    "not a Python process" : p->err.msg);
	}
	json_end_object(j);
}

static void write_report(const struct run_state *st, const char *why,
			 int timed_out, const struct run_proc *procs,
			 size_t n, const struct run_summary *sum)
{
	struct json j;
	size_t i;
	FILE *f;

	f = fopen(st->o->report, "we");
	if (!f) {
		fprintf(stderr, "coroscope: cannot write report '%s': %s\n",
			st->o->report, strerror(errno));
		return;
	}
	json_init(&j, f, 1);
	json_begin_object(&j);
	json_key(&j, "schema");
	json_int(&j, 1);
	json_key(&j, "timed_out");
	json_bool(&j, timed_out);
	json_key(&j, "reason");
	json_string(&j, why);
	json_key(&j, "command");
	json_begin_array(&j);
	for (i = 0; st->o->argv[i]; i++)
		json_string(&j, st->o->argv[i]);
	json_end_array(&j);
	json_key(&j, "causes");
	run_summary_json(&j, sum);
	json_key(&j, "processes");
	json_begin_array(&j);
	for (i = 0; i < n; i++)
		json_process(&j, &procs[i]);
	json_end_array(&j);
	json_end_object(&j);
	if (fclose(f) != 0)
		fprintf(stderr, "coroscope: cannot write report '%s': %s\n",
			st->o->report, strerror(errno));
}

static void md_thread(FILE *out, const struct py_thread *t)
{
	const struct py_frame *f = t->nframes ? &t->frames[0] : NULL;
	char place[64];
	const char *slash;

	fprintf(out, "  - thread %d", t->tid);
	if (t->name) {
		fputc(' ', out);
		run_md_code(out, t->name, 60);
	}
	if (!f) {
		fputs(": no Python frames\n", out);
		return;
	}
	slash = strrchr(f->code->filename, '/');
	if (f->line >= 0)
		snprintf(place, sizeof(place), "%s:%d",
			 slash ? slash + 1 : f->code->filename, f->line);
	else
		snprintf(place, sizeof(place), "%s",
			 slash ? slash + 1 : f->code->filename);
	fputs(": ", out);
	run_md_code(out, place, sizeof(place));
	fputs(" in ", out);
	run_md_code(out, f->code->qualname, 100);
	fputc('\n', out);
}

/* A short Markdown section for the GitHub job page; the full report is
 * in the log and the --report file. */
static void write_step_summary(const char *path, const char *headline,
			       const struct run_options *o,
			       const struct run_proc *procs, size_t n,
			       const struct run_summary *sum)
{
	char *cmd = join_argv(o->argv);
	size_t i, k;
	FILE *f;

	f = fopen(path, "ae");
	if (!f) {
		fprintf(stderr, "coroscope: cannot append to GITHUB_STEP_SUMMARY "
			"'%s': %s\n", path, strerror(errno));
		free(cmd);
		return;
	}
	fputs("### coroscope: ", f);
	run_md_text(f, headline, 200);
	fputs("\n\nCommand: ", f);
	run_md_code(f, cmd, 200);
	fputs("\n\n", f);
	if (sum->n) {
		fputs("**Likely cause**, most likely first:\n\n", f);
		run_summary_markdown(f, sum);
		fputc('\n', f);
	}
	fputs("**Processes** (innermost frame of each thread):\n\n", f);
	for (i = 0; i < n && i < MD_MAX_PROCS; i++) {
		const struct run_proc *p = &procs[i];

		fprintf(f, "- process %d (parent %d) ", p->e.pid, p->e.ppid);
		run_md_code(f, p->command ? p->command : "?", 120);
		if (!p->dumped) {
			fputs(p->err.code == CS_ERR_NOT_PYTHON ?
			      ": not Python\n" : ": not dumped\n", f);
			continue;
		}
		fprintf(f, ": Python %s\n", p->c.py.version);
		for (k = 0; k < p->c.snap.nthreads && k < MD_MAX_THREADS; k++)
			md_thread(f, &p->c.snap.threads[k]);
		if (p->c.snap.nthreads > MD_MAX_THREADS)
			fprintf(f, "  - ... and %zu more threads\n",
				p->c.snap.nthreads - MD_MAX_THREADS);
	}
	if (n > MD_MAX_PROCS)
		fprintf(f, "- ... and %zu more processes\n", n - MD_MAX_PROCS);
	fputc('\n', f);
	free(cmd);
	if (fclose(f) != 0)
		fprintf(stderr, "coroscope: cannot append to GITHUB_STEP_SUMMARY "
			"'%s': %s\n", path, strerror(errno));
}

/*
 * Dump every process of the tree: the text report on stderr, the JSON
 * file with --report, the step summary under GitHub Actions.  Each
 * process is stopped only while it is read; the tree runs on.
 */
static void dump_tree(struct run_state *st, int timed_out)
{
	struct proc_list tree = { 0 };
	struct run_summary sum;
	struct run_proc *procs;
	struct strbuf why;
	const char *gh;
	size_t i, npy = 0;
	char after[32];

	tree_collect(st, &tree);
	procs = xcalloc(tree.n ? tree.n : 1, sizeof(*procs));
	for (i = 0; i < tree.n; i++) {
		procs[i].e = tree.e[i];
		dump_one(&procs[i]);
		npy += procs[i].dumped;
	}
	/* A dump of the command may have taken its exit status. */
	reap(st);
	run_summary_init(&sum);
	for (i = 0; i < tree.n; i++)
		if (procs[i].dumped)
			run_summarize(&sum, &procs[i].c);
	run_summary_sort(&sum);

	strbuf_init(&why);
	if (timed_out) {
		duration_format(st->o->timeout_ms, after, sizeof(after));
		strbuf_addf(&why, "command timed out after %s", after);
	} else {
		strbuf_addstr(&why, "SIGUSR1: snapshot of the running command");
	}
	fprintf(stderr, "coroscope: %s; dumping %zu process%s (%zu Python)\n",
		why.buf, tree.n, tree.n == 1 ? "" : "es", npy);
	if (sum.n) {
		fputs("coroscope: likely cause, most likely first:\n", stderr);
		run_summary_text(stderr, &sum, "  ");
	} else if (npy) {
		fputs("coroscope: no likely cause stands out in the thread "
		      "stacks; every process follows\n", stderr);
	}
	for (i = 0; i < tree.n; i++)
		text_process(stderr, &procs[i]);
	fputc('\n', stderr);
	fflush(stderr);

	if (st->o->report)
		write_report(st, why.buf, timed_out, procs, tree.n, &sum);
	gh = getenv("GITHUB_STEP_SUMMARY");
	if (gh && *gh)
		write_step_summary(gh, why.buf, st->o, procs, tree.n, &sum);

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

/* ---- starting the command ---- */

/* The terminal coroscope runs in the foreground of, or -1. */
static int foreground_tty(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			return fd;
	return -1;
}

/*
 * Fork and exec the command in its own process group.  The child
 * restores coroscope's original signal mask and SIGCHLD disposition, so
 * the command starts as it would have without coroscope; an exec failure
 * comes back through a close-on-exec pipe.  Returns the pid, or -1 with
 * the exec's errno in *exec_errno.
 */
static int start_command(struct run_state *st, const sigset_t *oldmask,
			 const struct sigaction *oldchld, int *exec_errno)
{
	int fds[2], e = 0;
	ssize_t r;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*exec_errno = errno;
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Should coroscope die before the command (a crash, a
		 * SIGKILL), the command must not run on unwatched: it gets
		 * the SIGKILL coroscope's timeout would have sent. */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != st->self)
			_exit(EXIT_CANNOT_INVOKE);
		setpgid(0, 0);
		/* Both sides set the foreground group, so the command never
		 * reads the terminal from the background (SIGTTOU is still
		 * blocked here). */
		if (st->tty_fd >= 0)
			tcsetpgrp(st->tty_fd, getpid());
		sigaction(SIGCHLD, oldchld, NULL);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execvp(st->o->argv[0], st->o->argv);
		e = errno;
		while (write(fds[1], &e, sizeof(e)) < 0 && errno == EINTR)
			;
		_exit(EXIT_NOT_FOUND);
	}
	close(fds[1]);
	/* Also here: whichever of parent and child runs first. */
	setpgid(pid, pid);
	if (st->tty_fd >= 0)
		tcsetpgrp(st->tty_fd, pid);
	do
		r = read(fds[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(fds[0]);
	if (r == (ssize_t)sizeof(e)) {
		waitpid(pid, NULL, 0);
		*exec_errno = e;
		return -1;
	}
	return pid;
}

static int exit_status(const struct run_state *st, int timed_out)
{
	if (timed_out)
		return CS_ERR_TIMEOUT;
	if (st->status_lost) {
		fputs("coroscope: the command's exit status was lost while "
		      "it was being read\n", stderr);
		return CS_ERR_INTERNAL;
	}
	if (WIFEXITED(st->status))
		return WEXITSTATUS(st->status);
	if (WIFSIGNALED(st->status))
		return 128 + WTERMSIG(st->status);
	return CS_ERR_INTERNAL;
}

int cmd_run(int argc, char **argv)
{
	struct run_options o;
	struct run_state st;
	struct sigaction dfl, oldchld;
	sigset_t set, oldmask;
	double deadline = 0;
	int ret, sig, exec_errno, timed_out = 0;

	ret = parse_options(argc, argv, &o);
	if (ret)
		return ret;
	memset(&st, 0, sizeof(st));
	st.o = &o;
	st.self = (int)getpid();

	/*
	 * Every signal run handles is blocked for good and taken with
	 * sigtimedwait(): SIGCHLD (the command ended), SIGUSR1 (dump),
	 * the ones forwarded to the command, and those a terminal or a
	 * closed pipe would send coroscope while it handles the terminal
	 * or writes the report.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGTTOU);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	/* An inherited SIG_IGN would make the kernel reap the command
	 * itself and lose its status. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGCHLD, &dfl, &oldchld);
	/* Adopt orphans of the tree, so that none escapes the walk. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	st.tty_fd = foreground_tty();
	st.child = start_command(&st, &oldmask, &oldchld, &exec_errno);
	if (st.child < 0) {
		fprintf(stderr, "coroscope: cannot run '%s': %s\n", o.argv[0],
			strerror(exec_errno));
		return exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_INVOKE;
	}
	if (o.timeout_ms > 0)
		deadline = cs_now_ms() + (double)o.timeout_ms;

	while (!st.child_done) {
		double left = -1;

		if (deadline) {
			left = deadline - cs_now_ms();
			if (left <= 0) {
				/* The command may have ended just now. */
				reap(&st);
				if (st.child_done)
					break;
				timed_out = 1;
				break;
			}
		}
		sig = wait_signal(&set, left);
		switch (sig) {
		case SIGCHLD:
			if (reap(&st))
				follow_stop(&st);
			break;
		case SIGUSR1:
			dump_tree(&st, 0);
			break;
		case SIGINT:
		case SIGTERM:
		case SIGHUP:
		case SIGQUIT:
			/* The command's group, and the command itself
			 * should it have left the group. */
			kill(-st.child, sig);
			kill(st.child, sig);
			break;
		default:
			break;
		}
	}
	if (timed_out) {
		dump_tree(&st, 1);
		terminate_tree(&st, &set);
	}
	if (st.tty_fd >= 0)
		tcsetpgrp(st.tty_fd, getpgrp());
	proc_list_release(&st.known);
	return exit_status(&st, timed_out);
}
