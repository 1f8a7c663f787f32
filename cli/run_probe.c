#include "cli/run_probe.h"

#include "cli/run_places.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/regs.h"
#include "cli/collect_deadlines.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/native_merge.h"
#include "common/banned.h"

/* Bounds on what is read of the target's source files. */
#define MAX_SHOWN_SOURCE 160
/* How long threads get to settle back into their waits after a dump. */
#define SETTLE_MS 50
/* How long a blocked thread must sleep without a wake-up: several GIL
 * switch intervals (5 ms by default). */
#define QUIET_MS 40

/*
 * 1: the thread sleeps in futex(2), where every Python lock, condition
 * and GIL wait ends up; 0: it runs or sits in another system call;
 * -1: unknown (no kernel thread id, or the file cannot be read).
 *
 * A thread just released by the dump is still "running" for a moment,
 * on its way back into the call it was interrupted in: "running" is
 * asked again until *deadline, shared by all threads of a process so
 * that truly busy threads cost that wait once.
 */
static int in_futex_wait(int pid, int tid, double deadline)
{
#if defined(__x86_64__)
	const struct timespec pause = { 0, 1000000 };
	long nr = -1;
	int ret;

	if (tid <= 0)
		return -1;
	for (;;) {
		ret = procfs_thread_syscall(pid, tid, &nr);
		if (ret < 0)
			return -1;
		if (ret == 1 && cs_now_ms() < deadline) {
			nanosleep(&pause, NULL);
			continue;
		}
		return ret == 0 && cs_syscall_is_futex(nr);
	}
#else
	(void)pid;
	(void)tid;
	(void)deadline;
	return -1;
#endif
}

/* Through the collection's source cache (cli/source.h): the files the
 * target's own user may read, through its root (its cwd for a relative
 * name, as 3.6 - 3.8 record a script run as `python x.py`), and not one
 * changed since it started.  (A reader of its own here, before, read
 * any file the target named: `sudo coroscope run -- sudo -u nobody
 * python app.py`, a frame naming "/etc/shadow", printed its line.) */
char *run_probe_source(const struct collection *c, const char *filename,
		       int line)
{
	const char *text;
	size_t len;
	int cut;

	text = c->sources ? source_line(c->sources, filename, line, &cut) :
			    NULL;
	if (!text)
		return NULL;
	len = strlen(text);
	while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	if (len > MAX_SHOWN_SOURCE)
		len = MAX_SHOWN_SOURCE;
	return len ? xstrndup(text, len) : NULL;
}

void run_probe_add_line(struct strbuf *sb, const struct collection *c,
			const struct py_frame *f)
{
	char *source;

	run_add_frame_place(sb, f);
	/* (--no-source: no source cache, and no line of it here either) */
	if ((source = run_probe_source(c, f->code->filename, f->line))) {
		strbuf_addf(sb, ": %s", source);
		free(source);
	}
}

/* The thread's context switches so far, or -1. */
static long long switches(int pid, int tid)
{
	char status[PROCFS_STATUS_MAX];
	long vol, invol;

	if (tid <= 0 || procfs_status_read(pid, tid, status, sizeof(status)) < 0)
		return -1;
	/* One read for both counts: they must be of the same moment. */
	if (procfs_status_long(status, "voluntary_ctxt_switches", &vol) < 0)
		return -1;
	if (procfs_status_long(status, "nonvoluntary_ctxt_switches",
			       &invol) < 0)
		invol = 0;
	return (long long)vol + invol;
}

/*
 * Mark the threads in futex that sleep through QUIET_MS: blocked, not
 * waiting for the GIL (whose waiters wake every switch interval, 5 ms
 * by default).  One window for all threads of the process; none when
 * no thread needs it (their native frames said what they wait in).
 */
static void find_quiet(int pid, const struct py_snapshot *snap,
		       struct run_thread_facts *facts)
{
	const struct timespec window = { 0, QUIET_MS * 1000000L };
	long long *before;
	size_t i, n = 0;

	before = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof(*before));
	for (i = 0; i < snap->nthreads; i++) {
		before[i] = facts[i].futex == 1 && facts[i].quiet == 0 ?
			switches(pid, snap->threads[i].tid) : -1;
		n += before[i] >= 0;
	}
	if (n)
		nanosleep(&window, NULL);
	for (i = 0; i < snap->nthreads; i++)
		if (facts[i].quiet == 0)
			facts[i].quiet = before[i] >= 0 &&
				switches(pid, snap->threads[i].tid) == before[i];
	free(before);
}

/*
 * The native function the thread waits in: the innermost frame that
 * says, alone, what the whole stack says (a lock's sem_clockwait or
 * pthread_mutex_lock, the GIL's take_gil), else the innermost named one.
 */
static const char *native_call(const struct native_thread *nt,
			       const char *word)
{
	struct native_thread one;
	const char *named = NULL, *w;
	size_t i;

	for (i = 0; i < nt->nframes; i++) {
		const struct native_frame *f = &nt->frames[i];

		if (native_is_eval_frame(f))
			break;
		if (!f->sym.function)
			continue;
		if (!named)
			named = f->sym.function;
		one = *nt;
		one.frames = &nt->frames[i];
		one.nframes = 1;
		w = native_blocked_in(&one);
		if (w && !strcmp(w, word))
			return f->sym.function;
	}
	return named;
}

/* Is a C frame before the eval loop SQLite's (by its library, or its
 * functions' prefix where the library is linked in)?  SQLite sleeps
 * only in its busy handler, retrying a lock. */
static int in_sqlite(const struct native_thread *nt)
{
	size_t i;

	for (i = 0; nt && i < nt->nframes; i++) {
		const struct native_frame *f = &nt->frames[i];
		const char *lib = f->sym.library, *slash;

		if (native_is_eval_frame(f))
			return 0;
		if (f->sym.function && !strncmp(f->sym.function, "sqlite3", 7))
			return 1;
		if (!lib)
			continue;
		slash = strrchr(lib, '/');
		if (!strncmp(slash ? slash + 1 : lib, "libsqlite3", 10))
			return 1;
	}
	return 0;
}

/* The frame the wait-for graph blames thread i of the snapshot on (the
 * program's own line, past the libraries it waits in) where the graph
 * has the thread wait for something (a cause names it), else NULL. */
static const struct py_frame *blamed_waiting(const struct collection *c,
					     size_t i)
{
	const struct py_waitgraph *g = &c->graph;
	long node = py_waitgraph_node_of(g, WG_THREAD, i);

	return node >= 0 && py_waitgraph_waits(g, (size_t)node) ?
	       g->nodes[node].blame : NULL;
}

int run_probe_ends_waits(const struct collection *c, size_t i)
{
	const struct py_waitgraph *g = &c->graph;
	long node = py_waitgraph_node_of(g, WG_THREAD, i);
	const size_t *in, *out;
	size_t k, m;

	if (node < 0)
		return 0;
	out = py_waitgraph_out(g, (size_t)node, &m);
	for (k = 0; k < m; k++)
		if (g->edges[out[k]].kind == WG_HOLDS)
			return 1;
	in = py_waitgraph_in(g, (size_t)node, &m);
	for (k = 0; k < m; k++) {
		const struct wg_edge *e = &g->edges[in[k]];

		if (e->kind == WG_WAITS_FOR && e->from < g->nnodes &&
		    g->nodes[e->from].kind == WG_OBJECT &&
		    py_prim_is_future(&g->prims[g->nodes[e->from].index]))
			return 1;
	}
	return 0;
}

struct run_thread_facts *run_probe_threads(const struct collection *c)
{
	const struct py_snapshot *snap = &c->snap;
	struct run_thread_facts *facts;
	double deadline = cs_now_ms() + SETTLE_MS;
	int pid = collect_proc_pid(c);
	size_t i;

	facts = xcalloc(snap->nthreads ? snap->nthreads : 1, sizeof(*facts));
	for (i = 0; i < snap->nthreads; i++) {
		const struct py_thread *t = &snap->threads[i];
		const struct native_thread *nt;
		const struct py_frame *own, *blamed;
		const struct thread_deadline *dl;
		const char *b;

		dl = collect_deadline_of(c, t->tid);
		if (dl) {
			facts[i].timer = dl->sleep ? RUN_TIMER_SLEEP :
				RUN_TIMER_TIMEOUT;
			facts[i].timer_in_s = dl->in_s;
		}
		nt = t->tid > 0 ? native_stacks_find(&c->native, t->tid) : NULL;
		b = native_blocked_in(nt);
		/* "running": no known blocking call innermost (or frames
		 * that could not be named): the kernel says more. */
		if (b && strcmp(b, "running")) {
			facts[i].blocked_in = b;
			facts[i].native_call = native_call(nt, b);
			facts[i].sqlite = !strcmp(b, "sleep") && in_sqlite(nt);
		}
		/* As the analysis looks: a thread holding the GIL or
		 * without frames is not blocked. */
		if (!t->nframes || t->holds_gil == 1)
			continue;
		if (facts[i].blocked_in) {
			facts[i].futex = !strcmp(b, "lock") ||
				!strcmp(b, "gil") || !strcmp(b, "futex") ||
				!strcmp(b, "queue");
			/* a bare futex may still be a lock: does it wake? */
			facts[i].quiet = strcmp(b, "futex") ? -1 : 0;
		} else {
			facts[i].futex = in_futex_wait(pid, t->tid, deadline);
		}
		facts[i].hide_source = !c->sources;
		own = run_causes_own_frame(t);
		/* (and where a task's step runs: a blocked event loop) */
		if ((facts[i].futex != 0 ||
		     py_async_running_task(&c->async, t->tid) ||
		     run_probe_ends_waits(c, i)) && own)
			facts[i].source = run_probe_source(
				c, own->code->filename, own->line);
		blamed = blamed_waiting(c, i);
		if (blamed && blamed != own)
			facts[i].blame_source = run_probe_source(
				c, blamed->code->filename, blamed->line);
	}
	find_quiet(pid, snap, facts);
	return facts;
}

void run_probe_release(struct run_thread_facts *facts, size_t n)
{
	size_t i, k;

	for (i = 0; facts && i < n; i++) {
		free(facts[i].source);
		free(facts[i].blame_source);
		for (k = 0; facts[i].lock && k < RUN_LOCK_LINES; k++)
			free(facts[i].lock->lines[k]);
		free(facts[i].lock);
	}
	free(facts);
}

struct run_cause *run_probe_cause_at_own(struct run_summary *s,
					 enum run_cause_kind kind,
					 const struct collection *c,
					 const struct py_thread *th,
					 struct strbuf *sb)
{
	struct run_cause *cause = run_cause_add(s, kind, c->pid, sb);
	const struct py_frame *own = run_own_frame(th->frames, th->nframes);

	if (own) {
		strbuf_addstr(sb, "at ");
		run_probe_add_line(sb, c, own);
		run_cause_detail(cause, sb);
	}
	return cause;
}
