#include "cli/run_causes.h"
#include "cli/run_causes_internal.h"
#include "cli/escape.h"
#include "cli/thread_idle.h"

#include <stdlib.h>
#include <string.h>

#include "cli/alike_lines.h"
#include "cli/run_pool.h"
#include "cli/run_seen.h"
#include "cli/run_stuck.h"
#include "cli/timer_text.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/usercode.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* ---- threads ---- */

/* Modules whose frames are the machinery of waiting, not its reason:
 * a report names the call into them and the caller's line. */
static int is_sync_module(const char *filename)
{
	const char *base = cs_base_name(filename);

	/* (process.py: ProcessPoolExecutor.map()'s results come through
	 * a generator of its own, _chain_from_iterable_of_lists()) */
	return !strcmp(base, "threading.py") || !strcmp(base, "queue.py") ||
		cs_ends_with(filename, "/concurrent/futures/_base.py") ||
		cs_ends_with(filename, "/concurrent/futures/process.py") ||
		cs_ends_with(filename, "/multiprocessing/synchronize.py") ||
		cs_ends_with(filename, "/multiprocessing/pool.py");
}

/* `with lock:` or `lock.acquire()`: a frame whose own line blocks on a
 * lock acquired in C, which leaves no Python frame of its own. */
static int looks_like_lock(const char *source)
{
	const char *hash;
	size_t n;

	if (!source)
		return 0;
	/* The code only: a trailing comment ends at the line's end. */
	hash = strchr(source, '#');
	n = hash ? (size_t)(hash - source) : strlen(source);
	while (n > 0 && (source[n - 1] == ' ' || source[n - 1] == '\t'))
		n--;
	if (memmem(source, n, "acquire(", 8))
		return 1;
	return n > 5 && !strncmp(source, "with ", 5) && source[n - 1] == ':';
}

static enum blocked_kind sync_call_kind(const char *name)
{
	if (!strcmp(name, "acquire") || !strcmp(name, "__enter__"))
		return BLOCKED_LOCK;
	if (!strcmp(name, "wait") || !strcmp(name, "wait_for"))
		return BLOCKED_WAIT;
	if (!strcmp(name, "join") || !strcmp(name, "_wait_for_tstate_lock"))
		return BLOCKED_JOIN;
	return BLOCKED_NO;
}

/* How many innermost frames are the machinery of waiting. */
static size_t sync_frames(const struct py_thread *t)
{
	size_t i = 0;

	while (i < t->nframes && is_sync_module(t->frames[i].code->filename))
		i++;
	return i;
}

const struct py_frame *run_causes_own_frame(const struct py_thread *t)
{
	size_t i = sync_frames(t);

	return i < t->nframes ? &t->frames[i] : NULL;
}

static int is_word(const char *s, const char *word)
{
	return s && !strcmp(s, word);
}

static void classify(const struct py_thread *t,
		     const struct run_thread_facts *f,
		     const struct watch_tracker *tr, struct blocked *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	b->t = t;
	b->f = f;
	run_seen_thread(tr, t, &b->seen);
	if (!t->nframes || t->holds_gil == 1)
		return;
	i = sync_frames(t);
	if (i < t->nframes)
		b->where = &t->frames[i];
	/* A GIL waiter wakes at every switch interval, so the samples
	 * see it run: its native frames say what it waits for. */
	if (is_word(f->blocked_in, "gil")) {
		b->kind = BLOCKED_GIL;
		return;
	}
	/* Seen making progress or using a CPU over the samples: not
	 * blocked, whatever a single dump suggests. */
	if (b->seen.state == RUN_SEEN_MOVING || b->seen.state == RUN_SEEN_BUSY)
		return;
	if (f->futex == 0)
		return;  /* running, or blocked in I/O or a sleep */
	/* (a pool's handler thread: its frames all machinery of waiting;
	 * but a pool's worker waiting for a lock that no process holds
	 * waits for work that never comes) */
	if (thread_idle_by_design(t) && !(f->lock && f->lock->orphaned))
		return;
	if (i > 0) {
		b->kind = sync_call_kind(t->frames[0].code->name);
		b->api = &t->frames[i - 1];
	}
	/* its futex(2) wait is on a multiprocessing lock's semaphore: a
	 * lock's wait, whatever its frames say (cli/run_semlocks.h) */
	if (f->lock)
		b->kind = BLOCKED_LOCK;
	if (b->where)
		b->source = f->source;
	if (i > 0)
		return;
	/*
	 * A lock taken in C (threading.Lock, RLock) leaves the caller as
	 * the innermost frame.  Its native frames, when read, say so.
	 * Without them: a GIL wait sits in futex too, but wakes at every
	 * switch interval, so a thread that stays asleep is blocked in C
	 * on a lock, however its source is laid out (`with b: pass` on
	 * one line).  A lock taken with a timeout wakes too: for it, the
	 * line is the remaining clue.
	 */
	if (is_word(f->blocked_in, "lock"))
		b->kind = BLOCKED_LOCK;
	else if (is_word(f->blocked_in, "queue")) {
		b->kind = BLOCKED_WAIT;
		b->c_wait = "queue.SimpleQueue.get";
	} else if ((!f->blocked_in || is_word(f->blocked_in, "futex")) &&
		 f->futex == 1 &&
		 (f->quiet == 1 || looks_like_lock(b->source)))
		b->kind = BLOCKED_LOCK;
}

void run_add_thread_label(struct strbuf *sb, const struct py_thread *t)
{
	strbuf_addf(sb, "thread %d", t->tid);
	if (t->name) {
		strbuf_addstr(sb, " \"");
		esc_add_name_raw(sb, t->name);
		strbuf_addch(sb, '"');
	}
}

/* "at FILE:LINE in FUNC: SOURCE" (or the sync call when there is no
 * frame of the program's own). */
void blocked_add_where(struct strbuf *sb, const struct blocked *b)
{
	const struct py_frame *f = b->where ? b->where : b->api;

	if (!f)
		return;
	strbuf_addstr(sb, "at ");
	run_add_frame_place(sb, f);
	if (b->where && b->source && !b->f->hide_source)
		strbuf_addf(sb, ": %s", b->source);
}

void blocked_add_api(struct strbuf *sb, const struct py_frame *api)
{
	esc_add_name_raw(sb, api->code->qualname);
	strbuf_addstr(sb, " (");
	esc_add_name_raw(sb, cs_base_name(api->code->filename));
	strbuf_addch(sb, ')');
}

/* The call a waiting thread is in: "Event.wait (threading.py)", or a
 * wait in C, "queue.SimpleQueue.get (C)". */
static void add_wait_call(struct strbuf *sb, const struct blocked *b)
{
	if (b->api)
		blocked_add_api(sb, b->api);
	else if (b->c_wait)
		strbuf_addf(sb, "%s (C)", b->c_wait);
}

/* ", in C: sem_clockwait()": the native call it waits in, when read. */
void blocked_add_native_call(struct strbuf *sb, const struct blocked *b)
{
	if (b->f->native_call)
		strbuf_addf(sb, ", in C: %s()", b->f->native_call);
}

void run_add_threads_timer(struct strbuf *sb,
			   const struct run_thread_facts *const *f, size_t n)
{
	struct timer_span sp;
	size_t k;

	memset(&sp, 0, sizeof(sp));
	for (k = 0; k < n; k++)
		timer_span_add(&sp, f[k] ? f[k]->timer : RUN_TIMER_NONE, 0,
			       f[k] ? f[k]->timer_in_s : 0);
	if (!sp.n || sp.mixed)
		return;
	if (sp.clock == RUN_TIMER_SLEEP)
		timer_text_sleep(sb, n, sp.lo, sp.hi, 1, TIMER_THREAD);
	else
		timer_text_timeout(sb, n, sp.lo, sp.hi, 1, 0);
}

void run_add_thread_timer(struct strbuf *sb, const struct run_thread_facts *f)
{
	run_add_threads_timer(sb, &f, 1);
}

/* " (stuck for at least 4.0s)", when sampled. */
void blocked_add_seen(struct strbuf *sb, const struct run_seen *seen)
{
	if (seen->state != RUN_SEEN_STUCK && seen->state != RUN_SEEN_BUSY)
		return;
	strbuf_addstr(sb, " (");
	run_seen_add(sb, seen);
	strbuf_addch(sb, ')');
}

/*
 * Threads waiting for the GIL, and the thread holding it, named.  A
 * holder that stays in a blocking call (a C extension that did not
 * release the GIL) stops every other thread: that ranks high; a holder
 * running Python, or unknown, is contention, and ranks low.
 */
static void summarize_gil(struct run_summary *s, int pid,
			  const struct py_snapshot *snap,
			  const struct blocked *b)
{
	const struct py_thread *holder = NULL;
	const struct blocked *hb = NULL;
	enum run_cause_kind kind = RUN_CAUSE_GIL;
	struct run_cause *cause;
	struct strbuf sb;
	size_t i, n = 0;

	for (i = 0; i < snap->nthreads; i++) {
		n += b[i].kind == BLOCKED_GIL;
		if (snap->threads[i].holds_gil == 1) {
			holder = &snap->threads[i];
			hb = &b[i];
		}
	}
	if (!n)
		return;
	strbuf_init(&sb);
	strbuf_addf(&sb, "%zu thread%s wait%s for the GIL", n, n == 1 ? "" : "s",
		    n == 1 ? "s" : "");
	if (holder) {
		strbuf_addstr(&sb, ", held by ");
		run_add_thread_label(&sb, holder);
		if (hb->f->blocked_in && !is_word(hb->f->blocked_in, "gil")) {
			strbuf_addf(&sb, ", which is blocked in %s",
				    hb->f->native_call ? hb->f->native_call :
				    hb->f->blocked_in);
			kind = RUN_CAUSE_GIL_HELD;
		}
		if (holder->nframes) {
			strbuf_addstr(&sb, " at ");
			run_add_frame_place(&sb, holder->nframes > sync_frames(holder) ?
					&holder->frames[sync_frames(holder)] :
					&holder->frames[0]);
		}
	} else {
		strbuf_addstr(&sb, ", holder unknown");
	}
	cause = run_cause_add(s, kind, pid, &sb);
	for (i = 0; i < snap->nthreads; i++) {
		if (b[i].kind != BLOCKED_GIL)
			continue;
		run_add_thread_label(&sb, b[i].t);
		strbuf_addstr(&sb, " waits for the GIL");
		blocked_add_native_call(&sb, &b[i]);
		if (b[i].where) {
			strbuf_addstr(&sb, " ");
			blocked_add_where(&sb, &b[i]);
		}
		run_cause_detail(cause, &sb);
	}
	strbuf_release(&sb);
}

/* Busy thread i's detail lines: who joins it or waits on its job (four
 * at most): 'joined by thread 12 "MainThread" at app.py:8 in <module>'. */
static void add_busy_waiters(struct run_cause *cause,
			     const struct run_summary *s,
			     const struct blocked *b, size_t n, size_t i,
			     struct strbuf *sb)
{
	const struct py_waitgraph *g = s->graph;
	long node = g ? py_waitgraph_node_of(g, WG_THREAD, i) : -1;
	size_t k, j, m, w[4], nw, said = 0;
	const size_t *in;

	if (node < 0)
		return;
	in = py_waitgraph_in(g, (size_t)node, &m);
	for (k = 0; k < m && said < 4; k++) {
		const struct wg_edge *e = &g->edges[in[k]];
		const struct py_prim *p;

		if (e->kind != WG_WAITS_FOR || e->from >= g->nnodes ||
		    g->nodes[e->from].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[e->from].index];
		if (p->kind != PY_PRIM_THREAD && p->kind != PY_PRIM_CFUTURE)
			continue;
		nw = py_waitgraph_waiters(g, e->from, w, 4);
		for (j = 0; j < nw && j < 4 && said < 4; j++) {
			const struct wg_node *wn = &g->nodes[w[j]];

			if (wn->kind != WG_THREAD || wn->index >= n)
				continue;
			strbuf_addstr(sb, p->kind == PY_PRIM_THREAD ?
				      "joined by " : "its job waited on by ");
			run_add_thread_label(sb, b[wn->index].t);
			if (b[wn->index].where || b[wn->index].api)
				strbuf_addch(sb, ' ');
			blocked_add_where(sb, &b[wn->index]);
			run_cause_detail(cause, sb);
			said++;
		}
	}
}

/* Threads the samples saw using a CPU all along: a loop that never
 * ends hangs a program as surely as a lock. */
static void summarize_busy(struct run_summary *s, int pid,
			   const struct blocked *b, size_t n)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		const struct py_thread *t = b[i].t;

		if (b[i].seen.state != RUN_SEEN_BUSY || !t->nframes)
			continue;
		run_add_thread_label(&sb, t);
		strbuf_addstr(&sb, " is ");
		run_seen_add(&sb, &b[i].seen);
		strbuf_addstr(&sb, " at ");
		run_add_frame_place(&sb, b[i].where ? b[i].where : &t->frames[0]);
		add_busy_waiters(run_cause_add(s, RUN_CAUSE_BUSY, pid, &sb), s,
				 b, n, i, &sb);
	}
	strbuf_release(&sb);
}

/* The members of alike waiting threads b[w[m[0..n)]]. */
void blocked_add_members(struct strbuf *sb, const struct blocked *b,
			     const size_t *w, const size_t *m, size_t n)
{
	unsigned long long *ids = xmallocarray(n, sizeof(*ids));
	const char **names = xmallocarray(n, sizeof(*names));
	size_t k;

	for (k = 0; k < n; k++) {
		ids[k] = (unsigned long long)b[w[m[k]]].t->tid;
		names[k] = b[w[m[k]]].t->name;
	}
	alike_lines_members(sb, ids, names, n, ALIKE_QUOTED);
	free(ids);
	free(names);
}

/* What makes a wait alike another: its call and time stuck, then where
 * it was called from. */
static char *wait_key(const struct blocked *b)
{
	struct strbuf call, sb;

	strbuf_init(&call);
	strbuf_init(&sb);
	add_wait_call(&call, b);
	blocked_add_seen(&call, &b->seen);
	alike_lines_key_str(&sb, call.buf);
	blocked_add_where(&sb, b);
	/* (alike threads have timers of one kind, or none: their span) */
	strbuf_addf(&sb, ";timer %d", b->f ? b->f->timer : RUN_TIMER_NONE);
	strbuf_release(&call);
	return strbuf_detach(&sb);
}

int run_summary_explains(const struct run_summary *s,
			 const struct py_thread *t)
{
	int found = 0;

	if (s->explained && t->tstate)
		addrmap_get(s->explained, t->tstate, &found);
	return found;
}

int run_summary_says_thread(const struct run_summary *s,
			    const struct py_thread *t)
{
	int found = 0;

	if (t->tstate)
		addrmap_get(&s->said_threads, t->tstate, &found);
	return found;
}

/* Does a cause of the graph's name thread i of the snapshot as waiting
 * for something (a lock of a cycle, one whose holder is named or
 * unknown)?  One named only as a holder may be blocked on a lock the
 * graph does not see (one taken in C). */
static int graph_has_it_wait(const struct run_summary *s,
			     const struct py_thread *t, size_t i)
{
	const size_t *out;
	size_t n, k;
	long node;

	if (!s->graph || !run_summary_explains(s, t))
		return 0;
	node = py_waitgraph_node_of(s->graph, WG_THREAD, i);
	if (node < 0)
		return 0;
	out = py_waitgraph_out(s->graph, (size_t)node, &n);
	for (k = 0; k < n; k++)
		if (s->graph->edges[out[k]].kind == WG_WAITS_FOR)
			return 1;
	return 0;
}

/* Is a holder of what thread i waits for blocked on a lock the graph
 * does not see (taken in C)?  graph: the threads it says wait. */
static int held_by_blind_lock(const struct run_summary *s,
			      const struct blocked *b, size_t n,
			      const unsigned char *graph, size_t i)
{
	const struct py_waitgraph *g = s->graph;
	long node = py_waitgraph_node_of(g, WG_THREAD, i);
	size_t k, m, h, nh, hs[4];
	const size_t *out;

	if (node < 0)
		return 0;
	out = py_waitgraph_out(g, (size_t)node, &m);
	for (k = 0; k < m; k++) {
		if (g->edges[out[k]].kind != WG_WAITS_FOR)
			continue;
		nh = py_waitgraph_holders(g, g->edges[out[k]].to, hs, 4);
		for (h = 0; h < nh && h < 4; h++) {
			const struct wg_node *hn = &g->nodes[hs[h]];

			if (hn->kind == WG_THREAD && hn->index < n &&
			    b[hn->index].kind == BLOCKED_LOCK &&
			    !graph[hn->index])
				return 1;
		}
	}
	return 0;
}

/*
 * A thread blocked on a lock that a cause of the graph's names as a
 * waiter is said there, with its holder: it leaves the native guesses
 * below ("possible deadlock", "is blocked acquiring a lock").  Unless
 * that holder is itself blocked on a lock the graph does not see: the
 * two then are the guess's pattern, a deadlock half in C.
 */
static void drop_graph_explained(const struct run_summary *s,
				 struct blocked *b, size_t n)
{
	unsigned char *graph = xcalloc(n ? n : 1, 1);
	size_t i;

	for (i = 0; i < n; i++)
		graph[i] = b[i].kind == BLOCKED_LOCK &&
			   graph_has_it_wait(s, b[i].t, i);
	for (i = 0; i < n; i++)
		if (graph[i] && !held_by_blind_lock(s, b, n, graph, i))
			b[i].kind = BLOCKED_NO;
	free(graph);
}

/* The timers of the waits b[w[m[0..n)]] (alike: as a span). */
static void add_waits_timer(struct strbuf *sb, const struct blocked *b,
			    const size_t *w, const size_t *m, size_t n)
{
	const struct run_thread_facts **f = xmallocarray(n, sizeof(*f));
	size_t k;

	for (k = 0; k < n; k++)
		f[k] = b[w[m[k]]].f;
	run_add_threads_timer(sb, f, n);
	free(f);
}

/*
 * Threads waiting on a condition, event or queue, a cause each, or one
 * for three or more alike (the same call, seen as long, called from the
 * same place: a pool's workers) unless --all: "12 threads wait in
 * Event.wait (threading.py): 101 "w-0", ... and 7 more".  A library's
 * own threads (an idle executor worker) wait for work by design; a wait
 * is worth reporting from the program's code.
 */
static void summarize_waits(struct run_summary *s, int pid,
			    const struct run_snap *rs,
			    const struct blocked *b, size_t n)
{
	size_t *w = xmallocarray(n ? n : 1, sizeof(*w));
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	size_t i, nw = 0;
	struct alike_lines g;
	struct strbuf sb;

	for (i = 0; i < n; i++) {
		if (b[i].kind != BLOCKED_WAIT || (!b[i].api && !b[i].c_wait) ||
		    (b[i].where &&
		     !py_is_user_file(b[i].where->code->filename, NULL)))
			continue;
		/* named by a cause of the graph's, with its line's source */
		if (run_summary_explains(s, b[i].t))
			continue;
		keys[nw] = wait_key(&b[i]);
		w[nw++] = i;
	}
	alike_lines_group(&g, keys, nw, s->apart);
	strbuf_init(&sb);
	for (i = 0; i < g.ngroups; i++) {
		const size_t *m = g.member + g.first[i];
		size_t size = g.first[i + 1] - g.first[i];
		const struct blocked *first = &b[w[m[0]]];
		struct run_cause *cause;

		if (size == 1) {
			run_add_thread_label(&sb, first->t);
			strbuf_addstr(&sb, " waits in ");
		} else {
			strbuf_addf(&sb, "%zu threads wait in ", size);
		}
		add_wait_call(&sb, first);
		blocked_add_seen(&sb, &first->seen);
		add_waits_timer(&sb, b, w, m, size);
		if (size > 1) {
			strbuf_addstr(&sb, ": ");
			blocked_add_members(&sb, b, w, m, size);
		}
		cause = run_cause_add(s, RUN_CAUSE_WAIT, pid, &sb);
		if (first->where) {
			strbuf_addstr(&sb, "called ");
			blocked_add_where(&sb, first);
			run_cause_detail(cause, &sb);
		}
		/* (Future.result() of a pool's job: a thread pool's worker
		 * polling, which no cause of the graph's follows, or a
		 * process pool's) */
		if (size == 1 && s->graph) {
			long node = py_waitgraph_node_of(s->graph, WG_THREAD,
							 w[m[0]]);

			if (!run_add_worker(cause, s->graph, rs->snap,
					    rs->facts, node, &s->said_threads,
					    &sb))
				(void)run_add_pool_job(cause, s, node, &sb);
		}
		if (size == 1 && s->graph && first->t->tid == pid)
			run_cause_test(cause, s->graph->test, &sb);
	}
	alike_lines_release(&g);
	free(w);
	strbuf_release(&sb);
}

/* Seen running between samples, but in one place at every one: a
 * loop polling inside a task's step (time.sleep() in a loop, SQLite's
 * busy handler) holds its event loop as a stuck one does -- unless
 * another task of the loop was seen moving (a step that sleeps, then
 * awaits: loop_turns()). */
static int polls(const struct run_seen *seen)
{
	return seen->state == RUN_SEEN_MOVING && run_seen_same_for(seen) > 0;
}

/* Running, in one task's step at every sample, while its loop ran no
 * callback (its ready queue's count the same: readers/loop_turns.h):
 * as blocked, whatever the thread does in that step (a poll whose check
 * waits in a function of the program's own, so that the samples find
 * it at two lines, a step that goes from one blocking call to another).
 * How long is one_long_step()'s to say. */
static int runs_unturned(const struct run_seen *seen)
{
	return seen->state == RUN_SEEN_MOVING && seen->step_marked;
}

/*
 * A thread the samples saw stuck (or busy), or polling in one place, or
 * running in one step while its loop ran nothing, in
 * a task's step: the task's
 * coroutine is running on it and has not gone back to its event loop,
 * so none of the loop's other tasks can run, whatever they wait on (a
 * time.sleep() or a blocking read inside `async def`, the commonest
 * asyncio hang).  A cause each, naming the task, where the thread is,
 * and how many tasks of the loop it holds up.
 */
/* Was a task of `task`'s loop other than it seen making progress while
 * the thread ran that task's step (the loop turns between the polls)?
 * step_for: how long it has run it, as the samples saw. */
static int loop_turns(const struct py_async *a, const struct py_task *task,
		      const struct watch_tracker *tr, double step_for)
{
	struct run_seen sn;
	size_t k;

	/* Bounded by the tasks. */
	for (k = 0; k < a->ntasks; k++) {
		if (&a->tasks[k] == task || a->tasks[k].loop != task->loop)
			continue;
		run_seen_task(tr, a->tasks[k].addr, &sn);
		if (sn.state != RUN_SEEN_UNKNOWN && !sn.at_least &&
		    sn.stuck_for < step_for)
			return 1;
	}
	return 0;
}

/* A busy or polling thread runs a task's step at the stop; has it run
 * that one step at every sample (the probe after each saw it go on,
 * cli/watch_probe.h), as long as the stuck threshold at least?  A busy
 * server's loop runs a new one at each (a handler caught in its step),
 * and turns; so does a task that calls one function again and again
 * between awaits.  (Not "since the first sample" alone: a thread
 * started at the last two samples has run its one step since its
 * first, for 0.3 s.) */
static int one_long_step(const struct run_seen *seen,
			 const struct py_task *task,
			 const struct watch_tracker *tr)
{
	return seen->step == task->addr && tr &&
	       seen->step_for >= tr->stuck_s;
}

static void summarize_blocked_loops(struct run_summary *s, int pid,
				    const struct py_async *a,
				    const struct blocked *b, size_t n,
				    const struct watch_tracker *tr)
{
	struct strbuf sb;
	size_t i, k, others;

	strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		const struct py_thread *t = b[i].t;
		const struct py_task *task;

		if ((b[i].seen.state != RUN_SEEN_STUCK &&
		     b[i].seen.state != RUN_SEEN_BUSY && !polls(&b[i].seen) &&
		     !runs_unturned(&b[i].seen)) ||
		    !t->nframes || !(task = py_async_running_task(a, t->tid)) ||
		    /* its loop run again inside the step, waiting for
		     * events: not blocked (nest_asyncio) */
		    task->loop_waits ||
		    (b[i].seen.state != RUN_SEEN_STUCK &&
		     (!one_long_step(&b[i].seen, task, tr) ||
		      loop_turns(a, task, tr, b[i].seen.step_for))))
			continue;
		/* (not those whose steps run under this one, a loop run
		 * again inside them: they wait for it anyway) */
		for (k = 0, others = 0; k < a->ntasks; k++)
			others += &a->tasks[k] != task &&
				  a->tasks[k].loop == task->loop &&
				  !a->tasks[k].running;
		strbuf_addstr(&sb, "event loop blocked: ");
		run_add_thread_label(&sb, t);
		strbuf_addstr(&sb, " runs task '");
		esc_add_name_raw(&sb, task->name);
		strbuf_addstr(&sb, "' and has not gone back to its loop");
		blocked_add_seen(&sb, &b[i].seen);
		if (polls(&b[i].seen))
			strbuf_addf(&sb, " (%s, %.1fs)",
				    run_seen_same_place(&b[i].seen),
				    run_seen_same_for(&b[i].seen));
		else if (runs_unturned(&b[i].seen))
			strbuf_addf(&sb, " (in that step at every sample, "
				    "%.1fs, its loop running nothing)",
				    b[i].seen.step_for);
		if (others)
			strbuf_addf(&sb, "; %zu other task%s of the loop cannot "
				    "run", others, others == 1 ? "" : "s");
		run_causes_loop_blocked(s, pid, &b[i], &sb);
	}
	strbuf_release(&sb);
}

void run_causes_loop_blocked(struct run_summary *s, int pid,
			     const struct blocked *b, struct strbuf *sb)
{
	struct run_cause *cause = run_cause_add(s, RUN_CAUSE_LOOP_BLOCKED,
						pid, sb);
	const struct py_frame *own = run_causes_own_frame(b->t);

	/* (its sleep or wait is this cause's: no cause of its own) */
	if (b->t->tstate)
		addrmap_put(&s->said_threads, b->t->tstate, NULL);

	strbuf_addstr(sb, "at ");
	run_add_frame_place(sb, own ? own : &b->t->frames[0]);
	if (b->f->source && own && !b->f->hide_source)
		strbuf_addf(sb, ": %s", b->f->source);
	if (b->seen.state == RUN_SEEN_BUSY)
		strbuf_addstr(sb, ", busy");
	blocked_add_native_call(sb, b);
	/* (a time.sleep() in the step: when it ends, as the sleep cause it
	 * takes the place of would say; a timed wait's end, as a lock
	 * cause says it) */
	run_add_thread_timer(sb, b->f);
	run_cause_detail(cause, sb);
}

static void summarize_threads(struct run_summary *s, int pid,
			      const struct py_snapshot *snap,
			      const struct py_async *a,
			      const struct run_thread_facts *facts,
			      const struct watch_tracker *tr)
{
	size_t n = snap->nthreads, i;
	struct run_snap rs = { snap, facts };
	struct blocked *b;
	struct strbuf sb;

	if (!n)
		return;
	b = xcalloc(n, sizeof(*b));
	for (i = 0; i < n; i++)
		classify(&snap->threads[i], &facts[i], tr, &b[i]);
	drop_graph_explained(s, b, n);
	strbuf_init(&sb);
	run_causes_locks(s, pid, b, n, &sb);
	strbuf_release(&sb);
	summarize_blocked_loops(s, pid, a, b, n, tr);
	run_causes_blocked_hubs(s, pid, b, n);
	summarize_waits(s, pid, &rs, b, n);
	summarize_gil(s, pid, snap, b);
	summarize_busy(s, pid, b, n);
	free(b);
}

void run_summarize(struct run_summary *s, int pid,
		   const struct py_snapshot *snap, const struct py_async *a,
		   const struct run_thread_facts *facts,
		   const struct watch_tracker *t)
{
	struct run_snap rs = { snap, facts };

	addrmap_release(&s->said_threads);
	addrmap_init(&s->said_threads);
	/* A forked child's tasks are its parent's, where their causes
	 * are (and would be said twice); its own thread is its own. */
	if (!a->copied_at_fork) {
		run_summarize_await_cycles(s, pid, a);
		run_summarize_stuck_tasks(s, pid, &rs, a, t);
	}
	summarize_threads(s, pid, snap, a, facts, t);
}
