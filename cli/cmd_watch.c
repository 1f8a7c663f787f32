/*
 * coroscope watch PID: sample the process every interval with the same
 * pipeline as dump, follow each task and thread across samples
 * (cli/watch_track.c), say when one has made no progress for longer than
 * --stuck and when it moves again, and end with a summary.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked for the whole watch
 * and read from a signalfd between samples, so they never interrupt a
 * sample (the target is always resumed before we look at them); they end
 * the watch with the summary.  SIGQUIT keeps live.c's guard, which
 * detaches a stopped target before coroscope dies.
 */
#include "cli/commands.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/collect.h"
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

static int parse_duration_opt(const char *name, const char *arg,
			      long long *ms)
{
	struct cs_err err;

	cs_err_init(&err);
	if (duration_parse(arg, ms, &err) < 0)
		return cli_usage_error("watch: %s: %s", name, err.msg);
	return 0;
}

static int parse_options(int argc, char **argv, struct watch_options *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "for", required_argument, NULL, 'f' },
		{ "stuck", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-block", no_argument, NULL, 'n' },
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
			ret = parse_duration_opt("--interval", optarg,
						 &o->interval_ms);
			if (ret == 0 && o->interval_ms < WATCH_MIN_INTERVAL_MS)
				ret = cli_usage_error("watch: --interval must be at least %dms",
						      WATCH_MIN_INTERVAL_MS);
			break;
		case 'f':
			ret = parse_duration_opt("--for", optarg, &o->for_ms);
			if (ret == 0 && o->for_ms <= 0)
				ret = cli_usage_error("watch: --for must be longer than 0s");
			break;
		case 's':
			ret = parse_duration_opt("--stuck", optarg, &o->stuck_ms);
			break;
		case 'j':
			o->json = 1;
			break;
		case 'n':
			o->collect.no_block = 1;
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

/* ---- what the kernel accounts to each thread ----
 *
 * Kept to one small reader on purpose: a shared /proc parser can replace
 * it without touching the rest. */

struct thread_cpu {
	int tid;
	double cpu_s;        /* user + system time */
	long long runs;      /* times put on a CPU, -1 when unknown */
};

struct cpu_table {
	struct thread_cpu *v;
	size_t n, alloc;
	double at_ms;        /* cs_now_ms() when read */
};

static int read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

/*
 * schedstat ("ns-on-cpu ns-waiting times-run") is exact; stat's utime
 * and stime (fields 14 and 15, after the parenthesised name, which may
 * hold anything) come in clock ticks and cannot see a thread that wakes
 * for microseconds at a time.  stat is the fallback for kernels without
 * schedstat.
 */
static int thread_cpu_read(int pid, int tid, struct thread_cpu *out)
{
	char path[64], buf[1024];
	unsigned long long ns, wait, runs, ut, st;
	const char *p;
	long ticks;
	int i;

	out->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (read_small_file(path, buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "%llu %llu %llu", &ns, &wait, &runs) == 3) {
		out->cpu_s = (double)ns / 1e9;
		out->runs = (long long)runs;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* skip the state and the ten fields after it, up to utime */
	for (i = 0, p++; i < 12 && p; i++)
		p = strchr(p + 1, ' ');
	ticks = sysconf(_SC_CLK_TCK);
	if (!p || ticks <= 0 || sscanf(p, "%llu %llu", &ut, &st) != 2)
		return -1;
	out->cpu_s = (double)(ut + st) / (double)ticks;
	out->runs = -1;
	return 0;
}

static void cpu_table_read(struct cpu_table *t, int pid)
{
	char path[64];
	DIR *dir;
	struct dirent *de;

	t->n = 0;
	t->at_ms = cs_now_ms();
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)) != NULL && t->n < PY_MAX_THREADS) {
		int tid;
		struct thread_cpu tc;

		if (cli_parse_pid(de->d_name, &tid) < 0 ||
		    thread_cpu_read(pid, tid, &tc) < 0)
			continue;
		t->v = xgrow(t->v, &t->alloc, t->n + 1, sizeof(*t->v));
		t->v[t->n++] = tc;
	}
	closedir(dir);
}

static int by_tid(const void *a, const void *b)
{
	int x = ((const struct thread_cpu *)a)->tid;
	int y = ((const struct thread_cpu *)b)->tid;

	return (x > y) - (x < y);
}

static const struct thread_cpu *cpu_find(const struct cpu_table *t, int tid)
{
	struct thread_cpu key;

	key.tid = tid;
	return t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), by_tid) : NULL;
}

static void cpu_table_sort(struct cpu_table *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), by_tid);
}

/* ---- one sample, reduced to observations ---- */

struct sample {
	struct collection *c;
	const struct cpu_table *before;  /* read just after the last sample */
	const struct cpu_table *now;     /* read just before this one */
	char libdir[32];                 /* "/lib/python3.11/" */
};

/* The window of thread tid: CPU time and runs between the two reads,
 * which leaves out our own stop. */
static void thread_window(const struct sample *s, int tid, double *cpu_s,
			  long *runs, double *window_s)
{
	const struct thread_cpu *a = cpu_find(s->before, tid);
	const struct thread_cpu *b = cpu_find(s->now, tid);

	*cpu_s = -1;
	*runs = -1;
	*window_s = 0;
	if (!a || !b)
		return;
	*window_s = (s->now->at_ms - s->before->at_ms) / 1000;
	*cpu_s = b->cpu_s >= a->cpu_s ? b->cpu_s - a->cpu_s : 0;
	if (a->runs >= 0 && b->runs >= a->runs)
		*runs = (long)(b->runs - a->runs);
}

/* Did thread tid (any thread when 0) run between the samples? */
static int thread_ran(const struct sample *s, int tid)
{
	double cpu, window;
	long runs;
	size_t i;

	if (tid > 0) {
		thread_window(s, tid, &cpu, &runs, &window);
		return watch_thread_ran(cpu, runs);
	}
	for (i = 0; i < s->now->n; i++) {
		thread_window(s, s->now->v[i].tid, &cpu, &runs, &window);
		if (watch_thread_ran(cpu, runs))
			return 1;
	}
	return 0;
}

static uint64_t fnv_add(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8) {
		h ^= v & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_START 0xcbf29ce484222325ULL

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* The standard library and installed packages of the target's own
 * interpreter, and frozen modules: not "the user's code". */
static int is_library(const struct sample *s, const char *file)
{
	if (!file)
		return 1;
	return !strncmp(file, "<frozen", 7) || strstr(file, s->libdir) ||
	       strstr(file, "/site-packages/") || strstr(file, "/dist-packages/");
}

static void frame_place(const struct py_frame *f, struct watch_place *p)
{
	p->file = f->code ? f->code->filename : NULL;
	p->function = f->code ? f->code->qualname : NULL;
	p->line = f->line;
}

/* A coroutine's qualname is its own (gi_qualname), also before 3.11. */
static void gen_place(const struct py_gen *g, struct watch_place *p)
{
	frame_place(&g->frame, p);
	if (g->qualname)
		p->function = g->qualname;
}

static void observe_thread(struct watch_tracker *t, const struct sample *s,
			   const struct py_thread *th)
{
	struct watch_obs o;
	size_t i, user = th->nframes;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_THREAD;
	/* the kernel id when known, which is also the /proc key */
	o.id = th->tid > 0 ? (uint64_t)th->tid : th->thread_id;
	o.name = th->name;
	o.fingerprint = FNV_START;
	for (i = 0; i < th->nframes; i++) {
		const struct py_frame *f = &th->frames[i];

		o.fingerprint = fnv_add(o.fingerprint, f->addr);
		o.fingerprint = fnv_add(o.fingerprint,
					f->code ? f->code->addr : 0);
		o.fingerprint = fnv_add(o.fingerprint, (uint64_t)f->line);
		if (user == th->nframes && f->code &&
		    !is_library(s, f->code->filename))
			user = i;
	}
	o.where.line = o.inner.line = -1;
	if (th->nframes) {
		if (user == th->nframes)
			user = 0;
		frame_place(&th->frames[user], &o.where);
		if (user != 0)
			frame_place(&th->frames[0], &o.inner);
	}
	thread_window(s, th->tid, &o.cpu_s, &o.runs, &o.window_s);
	watch_observe(t, &o);
}

/*
 * A task parked in asyncio.sleep(d) awaits a new future after every d
 * seconds, and the allocator often hands the new future the old one's
 * address, so its fingerprint may not change.  When d is shorter than
 * the time since the previous sample and the loop's thread ran, it has
 * woken up in between.
 */
static int short_sleep_woke(const struct watch_tracker *t,
			    const struct sample *s, const struct py_task *task,
			    const struct py_gen *inner)
{
	const struct watch_item *it = watch_find(t, WATCH_TASK, task->addr);
	struct py_stack_options opt;
	struct py_frame f;
	struct cs_err err;
	double delay = -1;
	size_t i;

	if (!it || it->gone || !inner->has_frame || !inner->code ||
	    !inner->code->qualname || !inner->code->filename ||
	    strcmp(inner->code->qualname, "sleep") ||
	    !ends_with(inner->code->filename, "asyncio/tasks.py") ||
	    !thread_ran(s, task->tid))
		return 0;
	memset(&opt, 0, sizeof(opt));
	opt.locals = 1;
	memset(&f, 0, sizeof(f));
	cs_err_init(&err);
	/* reads the copy captured during the stop (or, for a target too
	 * large to copy or --no-block, racily: then it may just not tell) */
	if (py_frame_read(&s->c->py, inner->frame.addr, &opt, &f, &err) == 1) {
		for (i = 0; i < f.nlocals; i++) {
			char *end;
			double d;

			if (!f.locals[i].name || !f.locals[i].repr ||
			    strcmp(f.locals[i].name, "delay"))
				continue;
			d = strtod(f.locals[i].repr, &end);
			if (end != f.locals[i].repr && *end == '\0' && d >= 0)
				delay = d;
		}
	}
	for (i = 0; i < f.nlocals; i++)
		free(f.locals[i].repr);
	free(f.locals);
	return delay >= 0 && delay < t->now - it->last_seen;
}

static void task_waits_on(struct strbuf *sb, const struct py_async *a,
			  const struct py_task *task, const struct py_gen *inner,
			  int inner_is_library)
{
	const struct py_task *other;

	if (task->running) {
		strbuf_addstr(sb, "nothing (running)");
		return;
	}
	if (!task->waiter)
		return;
	other = py_async_task(a, task->waiter);
	if (other)
		strbuf_addf(sb, "task '%s'", other->name ? other->name : "?");
	else
		strbuf_addstr(sb, task->waiter_type ? task->waiter_type : "object");
	if (inner && inner_is_library && (inner->qualname || inner->code))
		strbuf_addf(sb, " in %s", inner->qualname ? inner->qualname :
			    inner->code->qualname);
}

static void observe_task(struct watch_tracker *t, const struct sample *s,
			 const struct py_task *task)
{
	const struct py_async *a = &s->c->async;
	const struct py_gen *inner = NULL, *user = NULL;
	struct watch_obs o;
	struct strbuf waits;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.kind = WATCH_TASK;
	o.id = task->addr;
	o.name = task->name;
	o.fingerprint = fnv_add(FNV_START, task->waiter);
	o.fingerprint = fnv_add(o.fingerprint, (uint64_t)task->running);
	for (i = 0; i < task->nstack; i++) {
		const struct py_gen *g;

		if (task->stack[i] >= a->ngens)
			continue;
		g = &a->gens[task->stack[i]];
		if (!inner)
			inner = g;
		o.fingerprint = fnv_add(o.fingerprint, g->addr);
		if (!g->has_frame)
			continue;
		o.fingerprint = fnv_add(o.fingerprint, g->frame.addr);
		o.fingerprint = fnv_add(o.fingerprint, (uint64_t)g->frame.line);
		if (!user && g->code && !is_library(s, g->code->filename))
			user = g;
	}
	o.cpu_s = -1;
	o.runs = -1;
	o.where.line = o.inner.line = -1;
	if (!user)
		user = inner;
	if (user && user->has_frame)
		gen_place(user, &o.where);
	if (inner && inner != user && inner->has_frame)
		gen_place(inner, &o.inner);
	strbuf_init(&waits);
	task_waits_on(&waits, a, task, inner, inner && inner != user);
	o.waits_on = waits.len ? waits.buf : NULL;
	o.woke = inner && task->waiter && short_sleep_woke(t, s, task, inner);
	watch_observe(t, &o);
	strbuf_release(&waits);
}

static void observe_sample(struct watch_tracker *t, const struct sample *s)
{
	size_t i;

	for (i = 0; i < s->c->snap.nthreads; i++)
		observe_thread(t, s, &s->c->snap.threads[i]);
	for (i = 0; i < s->c->async.ntasks; i++)
		observe_task(t, s, &s->c->async.tasks[i]);
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
		if (view)
			n = 2;
		r = poll(p, (nfds_t)n, (int)ceil(left));
		if (r < 0 && errno != EINTR)
			return 1;
		if (r > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				return 1;
			return 1;
		}
		if (r > 0 && (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)))
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
	struct cpu_table tables[2];
	struct cpu_table *before = &tables[0], *now = &tables[1];
	char *command = NULL, *python = NULL, *last_error = NULL;
	double start, next, sampled_at;
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
	start = cs_now_ms();
	for (k = 0;; k++) {
		struct collection c;
		struct cs_err err;
		struct sample s;

		cs_err_init(&err);
		cpu_table_read(now, o.pid);
		cpu_table_sort(now);
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
			s.c = &c;
			s.before = before;
			s.now = now;
			snprintf(s.libdir, sizeof(s.libdir), "/lib/python%d.%d/",
				 c.py.major, c.py.minor);
			watch_begin(&t, (now->at_ms - start) / 1000);
			observe_sample(&t, &s);
			watch_end(&t);
			if (want_view && !view)
				view = watch_view_open();
			print_events(&t, view, o.json ? stderr : stdout);
		}
		collection_release(&c);
		/* the next window starts now: the target is running again */
		{
			struct cpu_table *tmp = before;

			before = now;
			now = tmp;
		}
		cpu_table_read(before, o.pid);
		cpu_table_sort(before);
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
	free(tables[0].v);
	free(tables[1].v);
	free(command);
	free(python);
	free(last_error);
	return ret;
}
