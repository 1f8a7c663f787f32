#include "cli/report_graph.h"


#include <stdlib.h>
#include <string.h>

#include "cli/child_pipes.h"
#include "cli/escape.h"
#include "cli/timer_text.h"
#include "readers/usercode.h"
#include "common/banned.h"

#define GRAPH_MAX_HOLDERS 8   /* holders named per object in one line */
/* What one unit waits for named in its line (a TaskGroup's parent
 * waits for each child: 20,000 made a line of 1.9 MB), then counted. */
#define GRAPH_MAX_WAITS 5

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

/* A name from the target: escaped, or kept for the writer to escape. */
static void add_name(struct strbuf *sb, const char *s, enum graph_names names)
{
	if (names == GRAPH_RAW)
		esc_add_name_raw(sb, s);
	else
		esc_add(sb, s, ESC_NAME, 0);
}

void graph_add_place_line(struct strbuf *sb, const struct py_frame *f,
			  int line, enum graph_names names)
{
	if (!f || !f->code) {
		strbuf_addstr(sb, "?");
		return;
	}
	add_name(sb, base_name(f->code->filename), names);
	if (line >= 0)
		strbuf_addf(sb, ":%d", line);
	strbuf_addstr(sb, " in ");
	add_name(sb, f->code->qualname, names);
}

void graph_add_place(struct strbuf *sb, const struct py_frame *f,
		     enum graph_names names)
{
	graph_add_place_line(sb, f, f ? f->line : -1, names);
}

/* A greenlet other than its thread's main one: gevent's name, else
 * the function it was spawned to run (as watch names it), else its
 * address. */
static void add_greenlet_name(struct strbuf *sb, const struct py_greenlet *gr,
			      enum graph_names names)
{
	if (gr->name || gr->function) {
		strbuf_addstr(sb, "greenlet '");
		add_name(sb, gr->name ? gr->name : gr->function, names);
		strbuf_addstr(sb, "'");
	} else {
		strbuf_addf(sb, "greenlet 0x%llx", (unsigned long long)gr->addr);
	}
}

/* The greenlet thread tid runs, when it is one spawned (not its main
 * greenlet, not gevent's hub), or NULL: a thread's frames, and what
 * they hold, are then that greenlet's. */
static const struct py_greenlet *spawned_running(const struct py_greenlets *gs,
						 int tid)
{
	size_t k;

	/* Bounded by the greenlets read (none in most processes). */
	for (k = 0; tid > 0 && k < gs->n; k++) {
		const struct py_greenlet *g = &gs->v[k];

		if (g->tid == tid && g->state == PY_GREENLET_RUNNING)
			return g->is_main || py_greenlet_is_hub(g) ? NULL : g;
	}
	return NULL;
}

void graph_add_label(struct strbuf *sb, const struct collection *c,
		     size_t node, enum graph_names names)
{
	const struct wg_node *n = &c->graph.nodes[node];

	switch (n->kind) {
	case WG_THREAD: {
		const struct py_thread *t = &c->snap.threads[n->index];
		const struct py_greenlet *g;

		strbuf_addf(sb, "thread %d", t->tid);
		if (t->name) {
			strbuf_addstr(sb, " (");
			add_name(sb, t->name, names);
			strbuf_addstr(sb, ")");
		}
		if ((g = spawned_running(&c->greenlets, t->tid)) != NULL) {
			strbuf_addstr(sb, " running ");
			add_greenlet_name(sb, g, names);
		}
		break;
	}
	case WG_TASK: {
		const struct py_task *t = &c->async.tasks[n->index];

		strbuf_addstr(sb, "task '");
		add_name(sb, t->name, names);
		strbuf_addstr(sb, "'");
		break;
	}
	case WG_GREENLET: {
		const struct py_greenlet *gr = &c->greenlets.v[n->index];

		if (gr->is_main)
			strbuf_addf(sb, "main greenlet of thread %d", gr->tid);
		else
			add_greenlet_name(sb, gr, names);
		/* (a dead one owning a lock, one not started that others
		 * join) */
		if (gr->state == PY_GREENLET_DEAD)
			strbuf_addstr(sb, " (dead)");
		else if (gr->state == PY_GREENLET_NOT_STARTED)
			strbuf_addstr(sb, " (not started)");
		break;
	}
	case WG_OBJECT: {
		const struct py_prim *p = &c->graph.prims[n->index];
		struct strbuf st;

		add_name(sb, p->cls ? p->cls : p->name, names);
		strbuf_addf(sb, " 0x%llx", (unsigned long long)p->addr);
		strbuf_init(&st);
		py_prim_state(p, &st);
		if (p->kind == PY_PRIM_PROCESS)
			child_pipe_say(&st, child_pipe_of(c->child_pipes,
							  c->nchild_pipes,
							  p->pid));
		if (st.len)
			strbuf_addf(sb, " (%s)", st.buf);
		strbuf_release(&st);
		break;
	}
	}
}

void graph_add_blame(struct strbuf *sb, const struct collection *c,
		     size_t node, enum graph_names names)
{
	const struct wg_node *n = &c->graph.nodes[node];

	if (n->kind == WG_OBJECT)
		return;
	if (n->blame) {
		strbuf_addstr(sb, " at ");
		graph_add_place(sb, n->blame, names);
	}
	if (n->inner && n->inner != n->blame) {
		strbuf_addstr(sb, n->blame ? " (innermost " : " at ");
		graph_add_place(sb, n->inner, names);
		if (n->blame)
			strbuf_addstr(sb, ")");
	}
}

/* The thread node a Thread object node waits for (the thread it runs
 * as), else the node itself. */
static size_t thread_of(const struct py_waitgraph *g, size_t node)
{
	size_t k, m;
	const size_t *out;

	if (g->nodes[node].kind != WG_OBJECT ||
	    g->prims[g->nodes[node].index].kind != PY_PRIM_THREAD)
		return node;
	out = py_waitgraph_out(g, node, &m);
	for (k = 0; k < m; k++)
		if (g->edges[out[k]].kind == WG_WAITS_FOR &&
		    g->nodes[g->edges[out[k]].to].kind == WG_THREAD)
			return g->edges[out[k]].to;
	return node;
}

/* " whose coroutine f() is not started: scheduled on the loop of ":
 * run_coroutine_threadsafe()'s future, its coroutine named when the heap
 * walk read it. */
static void add_scheduled(struct strbuf *sb, const struct collection *c,
			  const struct py_prim *p, enum graph_names names)
{
	uintptr_t i = p->scheduled_coro ?
		      (uintptr_t)addrmap_get(&c->async.gen_index,
					     p->scheduled_coro, NULL) : 0;
	const char *name = i ? c->async.gens[i - 1].qualname : NULL;

	strbuf_addstr(sb, " whose coroutine ");
	if (name) {
		add_name(sb, name, names);
		strbuf_addstr(sb, "() ");
	}
	strbuf_addstr(sb, "is not started: scheduled on the loop of ");
}

void graph_add_future_waits(struct strbuf *sb, const struct collection *c,
			    size_t fut, enum graph_names names)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p = &g->prims[g->nodes[fut].index];
	size_t k, m, n = 0, to, nw = 0;
	const size_t *out = py_waitgraph_out(g, fut, &m);
	int pool = p->kind == PY_PRIM_POOL_RESULT;
	/* a job still in a ThreadPoolExecutor's queue waits for the
	 * first of the pool's workers to be free (readers/
	 * waitgraph_pool.c) */
	int queued = p->kind == PY_PRIM_CFUTURE && p->queued;

	for (k = 0; k < m; k++)
		nw += g->edges[out[k]].kind == WG_WAITS_FOR;
	for (k = 0; k < m; k++) {
		const struct wg_edge *e = &g->edges[out[k]];
		const char *first = " for ";

		if (e->kind != WG_WAITS_FOR)
			continue;
		if (n++ >= GRAPH_MAX_HOLDERS)
			continue;
		if (p->kind == PY_PRIM_CFUTURE && p->scheduled && n == 1) {
			add_scheduled(sb, c, p, names);
			first = "";
		} else if (queued && nw == 1)
			first = " queued for its pool's one worker, ";
		else if (queued)
			first = " queued for the first free of its pool's "
				"workers: ";
		strbuf_addstr(sb, n > 1 ? ", " : first);
		to = pool ? thread_of(g, e->to) : e->to;
		graph_add_label(sb, c, to, names);
		graph_add_blame(sb, c, to, names);
	}
	if (n > GRAPH_MAX_HOLDERS)
		strbuf_addf(sb, " and %zu more", n - GRAPH_MAX_HOLDERS);
}

void graph_add_wait(struct strbuf *sb, const struct collection *c,
		    size_t node, enum graph_names names)
{
	const struct py_waitgraph *g = &c->graph;
	size_t k, m, n, holders[GRAPH_MAX_HOLDERS];
	const size_t *out = py_waitgraph_out(g, node, &m);
	size_t shown = 0, more = 0;
	const char *word = "";
	int first = 1;

	for (k = 0; k < m; k++) {
		const struct wg_edge *e = &g->edges[out[k]];

		if (e->kind != WG_WAITS_FOR)
			continue;
		if (shown++ >= GRAPH_MAX_WAITS) {
			more++;
			word = !e->any ? "and for " : e->maybe_all ? "" : "or ";
			continue;
		}
		/* (a waiter's "first of" edges come together: one wait;
		 * gevent's do not say whether the first or all) */
		strbuf_addstr(sb, first ? (e->any && e->maybe_all ?
					   "waits for the first or all of: " :
					   e->any ? "waits for the first of: " :
					   "waits for: ") :
			      e->any && e->maybe_all ? "; " :
			      e->any ? "; or: " : "; and for: ");
		first = 0;
		graph_add_label(sb, c, e->to, names);
		if (g->nodes[e->to].kind != WG_OBJECT) {
			graph_add_blame(sb, c, e->to, names);
			continue;
		}
		if (py_prim_is_future(&g->prims[g->nodes[e->to].index])) {
			graph_add_future_waits(sb, c, e->to, names);
			continue;
		}
		n = py_waitgraph_holders(g, e->to, holders, GRAPH_MAX_HOLDERS);
		if (!n && py_prim_may_be_held(&g->prims[g->nodes[e->to].index])) {
			graph_add_no_holder(sb, c,
					    &g->prims[g->nodes[e->to].index],
					    " ", names);
			continue;
		}
		graph_add_holders(sb, c, e->to, holders, n, GRAPH_MAX_HOLDERS,
				  names);
	}
	if (more)
		strbuf_addf(sb, "; %s%zu more", word, more);
}

/* "asyncio.Lock (locked)": the type (its own class) and state, no
 * address. */
static void add_short_object(struct strbuf *sb, const struct py_prim *p)
{
	struct strbuf st;

	if (p->kind == PY_PRIM_GATHER && p->children >= 0) {
		strbuf_addf(sb, "gather of %lld", (long long)p->children);
		if (p->done >= 0)
			strbuf_addf(sb, " (%lld done)", (long long)p->done);
		return;
	}
	/* Its own class where it has one (a PriorityQueue, a user's
	 * Thread): a target's name. */
	add_name(sb, p->cls ? p->cls : p->name, GRAPH_ESCAPED);
	strbuf_init(&st);
	py_prim_state(p, &st);
	if (st.len)
		strbuf_addf(sb, " (%s)", st.buf);
	strbuf_release(&st);
}

/* The waits-for edge graph_add_short_wait() describes, or -1. */
static long short_wait_edge(const struct py_waitgraph *g, size_t node)
{
	size_t i, m;
	const size_t *out = py_waitgraph_out(g, node, &m);

	for (i = 0; i < m; i++) {
		const struct wg_edge *e = &g->edges[out[i]];

		if (e->kind == WG_WAITS_FOR &&
		    g->nodes[e->to].kind == WG_OBJECT)
			return (long)out[i];
	}
	return -1;
}

const struct py_prim *graph_short_wait_object(const struct collection *c,
					      size_t node)
{
	const struct py_waitgraph *g = &c->graph;
	long e = short_wait_edge(g, node);

	return e < 0 ? NULL : &g->prims[g->nodes[g->edges[e].to].index];
}

void graph_add_short_wait(struct strbuf *sb, const struct collection *c,
			  size_t node)
{
	const struct py_waitgraph *g = &c->graph;
	size_t k, mf, n, holders[2];
	long e = short_wait_edge(g, node);
	const struct py_prim *p;
	const size_t *fout;
	size_t to;

	if (e < 0)
		return;
	to = g->edges[e].to;
	p = &g->prims[g->nodes[to].index];
	strbuf_addstr(sb, "waits for ");
	add_short_object(sb, p);
	if (py_prim_is_future(p)) {
		/* a concurrent future: who completes it; a Thread: the
		 * thread it runs as (a gather's children are drawn under
		 * the task) */
		fout = py_waitgraph_out(g, to, &mf);
		for (k = 0; p->kind != PY_PRIM_GATHER && k < mf; k++)
			if (g->edges[fout[k]].kind == WG_WAITS_FOR) {
				strbuf_addstr(sb, " of ");
				graph_add_label(sb, c, g->edges[fout[k]].to,
						GRAPH_ESCAPED);
				break;
			}
		return;
	}
	n = py_waitgraph_holders(g, to, holders, 1);
	if (n) {
		strbuf_addstr(sb, " held by ");
		(void)graph_add_short_holder(sb, c, node, GRAPH_ESCAPED);
	} else if (py_prim_may_be_held(p)) {
		graph_add_no_holder(sb, c, p, ", ", GRAPH_ESCAPED);
	}
}

int graph_add_short_holder(struct strbuf *sb, const struct collection *c,
			   size_t node, enum graph_names names)
{
	const struct py_waitgraph *g = &c->graph;
	long e = short_wait_edge(g, node);
	size_t n, holders[2];

	if (e < 0 || py_prim_is_future(&g->prims[g->nodes[g->edges[e].to].index]))
		return 0;
	n = py_waitgraph_holders(g, g->edges[e].to, holders, 2);
	if (!n)
		return 0;
	graph_add_label(sb, c, holders[0], names);
	if (n > 1)
		strbuf_addf(sb, " and %zu more", n - 1);
	return 1;
}

int graph_owner_gone(const struct collection *c, const struct py_prim *p)
{
	size_t t;

	if (!py_prim_thread_owned(p) || !p->owner ||
	    c->snap.nthreads >= PY_MAX_THREADS)
		return 0;
	for (t = 0; t < c->snap.nthreads; t++)
		if (!c->snap.threads[t].thread_id ||
		    c->snap.threads[t].thread_id == p->owner)
			return 0;
	return 1;
}

void graph_add_no_holder(struct strbuf *sb, const struct collection *c,
			 const struct py_prim *p, const char *sep,
			 enum graph_names names)
{
	strbuf_addstr(sb, sep);
	if (graph_owner_gone(c, p)) {
		strbuf_addf(sb, "held by thread ident 0x%llx, " GRAPH_GONE,
			    (unsigned long long)p->owner);
		return;
	}
	if (!p->owner_task || !p->owner_name) {
		strbuf_addstr(sb, "holder unknown");
		return;
	}
	strbuf_addstr(sb, "held by task '");
	add_name(sb, p->owner_name, names);
	strbuf_addf(sb, "' 0x%llx (ended)", (unsigned long long)p->owner_task);
}

/* Longer cycles name their tasks with addresses without comparing. */
#define CYCLE_LABELS_COMPARED 64

/* Do two nodes of the cycle have the same label ("task 'await_task'"
 * twice: before 3.8 a task's name is its coroutine's)? */
static int cycle_labels_clash(const struct collection *c, size_t cycle)
{
	const struct cycle_list *cl = &c->graph.cycles;
	size_t len = cl->len[cycle], k, m;
	struct strbuf lk, lm;
	int clash = 0;

	if (len > CYCLE_LABELS_COMPARED)
		return 1;
	strbuf_init(&lk);
	strbuf_init(&lm);
	for (k = 0; k < len && !clash; k++) {
		strbuf_reset(&lk);
		graph_add_label(&lk, c, cl->cycles[cycle][k], GRAPH_RAW);
		for (m = k + 1; m < len && !clash; m++) {
			strbuf_reset(&lm);
			graph_add_label(&lm, c, cl->cycles[cycle][m], GRAPH_RAW);
			clash = !strcmp(lk.buf, lm.buf);
		}
	}
	strbuf_release(&lk);
	strbuf_release(&lm);
	return clash;
}

void graph_add_cycle(struct strbuf *sb, const struct collection *c,
		     size_t cycle, enum graph_names names)
{
	const struct cycle_list *cl = &c->graph.cycles;
	int addr = cycle_labels_clash(c, cycle);
	size_t k;

	for (k = 0; k <= cl->len[cycle]; k++) {
		size_t node = cl->cycles[cycle][k % cl->len[cycle]];
		const struct wg_node *n = &c->graph.nodes[node];

		if (k)
			strbuf_addstr(sb, " -> ");
		graph_add_label(sb, c, node, names);
		if (addr && n->kind == WG_TASK)
			strbuf_addf(sb, " 0x%llx", (unsigned long long)
				    c->async.tasks[n->index].addr);
	}
}

int graph_add_task_timers(struct strbuf *sb, const struct collection *c,
			  const size_t *nodes, const size_t *m, size_t n,
			  int times)
{
	const struct py_task **tasks;
	size_t k, nt = 0, len = sb->len;

	if (!n)
		return 0;
	tasks = xmallocarray(n, sizeof(*tasks));
	for (k = 0; k < n; k++) {
		const struct wg_node *nd = &c->graph.nodes[nodes[m ? m[k] : k]];

		if (nd->kind == WG_TASK && nd->index < c->async.ntasks)
			tasks[nt++] = &c->async.tasks[nd->index];
	}
	if (nt == n)
		timer_text_tasks(sb, tasks, nt, c->clock_s, times);
	free(tasks);
	return sb->len > len;
}

/* The lock inside a threading.Condition's object node n, or 0. */
static uint64_t cond_lock_of(const struct py_waitgraph *g, size_t n)
{
	const struct py_prim *p;

	if (g->nodes[n].kind != WG_OBJECT)
		return 0;
	p = &g->prims[g->nodes[n].index];
	return p->kind == PY_PRIM_CONDITION &&
	       p->family == PY_PRIM_THREADING ? p->inner : 0;
}

/* One frame (of one thread's stack, or one generator's), however it
 * was reached: the frame object's address. */
static int same_frame(const struct py_frame *a, const struct py_frame *b)
{
	return a == b || (a && b && a->addr == b->addr);
}

/*
 * The hold of the lock inside Condition node e->to by e's holder, or
 * -1: the graph adds it where a thread waits for that lock (a bare
 * `cond.acquire()`), from the same frame or as the lock's owner (not a
 * `with lock:` of the holder's own elsewhere).  Among the lock's edges
 * in (its holders and waiters).
 */
static long cond_lock_hold(const struct py_waitgraph *g,
			   const struct wg_edge *e)
{
	uint64_t lock = cond_lock_of(g, e->to);
	uintptr_t node = lock ? (uintptr_t)addrmap_get(&g->index, lock, NULL) :
			 0;
	const size_t *in;
	size_t n, k;

	if (!node)
		return -1;
	in = py_waitgraph_in(g, node - 1, &n);
	for (k = 0; k < n; k++) {
		const struct wg_edge *o = &g->edges[in[k]];

		if (o->kind == WG_HOLDS && o->from == e->from &&
		    (!o->at || same_frame(o->at, e->at)))
			return (long)in[k];
	}
	return -1;
}

/*
 * Which holds of a Condition's lock the Holders list says on the line of
 * the Condition (the first of the holder's Conditions on that lock: two
 * may share one): merged[i] is the lock's hold said on hold i's line,
 * or -1; said[j] is set for such a hold j, which has no line of its
 * own.  Both arrays of g->nedges entries.
 */
static void cond_lock_merges(const struct py_waitgraph *g, long *merged,
			     unsigned char *said)
{
	size_t i;
	long j;

	for (i = 0; i < g->nedges; i++) {
		merged[i] = -1;
		if (g->edges[i].kind != WG_HOLDS ||
		    (j = cond_lock_hold(g, &g->edges[i])) < 0 || said[j])
			continue;
		merged[i] = j;
		said[j] = 1;
	}
}

/* A hold nobody waits for, taken inside a library (subprocess's
 * Popen.wait() holding its own _waitpid_lock): true, and no answer to
 * anything; the JSON keeps it. */
static int library_hold(const struct collection *c, const struct wg_edge *e,
			long inner)
{
	const struct py_waitgraph *g = &c->graph;

	return e->at && e->at->code && e->at->code->filename &&
	       !py_is_user_file(e->at->code->filename, NULL) &&
	       py_waitgraph_waiters(g, e->to, NULL, 0) == 0 &&
	       (inner < 0 ||
		py_waitgraph_waiters(g, g->edges[inner].to, NULL, 0) == 0);
}

void report_text_graph(FILE *out, const struct collection *c)
{
	const struct py_waitgraph *g = &c->graph;
	long *merged = xcalloc(g->nedges ? g->nedges : 1, sizeof(*merged));
	unsigned char *said = xcalloc(g->nedges ? g->nedges : 1, 1);
	struct strbuf sb;
	size_t i, any = 0;

	strbuf_init(&sb);
	report_text_waits(out, c);
	cond_lock_merges(g, merged, said);
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		long inner = merged[i];
		size_t nw, nh;
		int one_of;

		if (e->kind != WG_HOLDS || said[i] || library_hold(c, e, inner))
			continue;
		if (!any++)
			fputs("\nHolders:\n", out);
		strbuf_reset(&sb);
		graph_add_hold(&sb, c, e, GRAPH_ESCAPED);
		nh = py_waitgraph_holders(g, e->to, NULL, 0);
		one_of = graph_holders_exclusive(c, e->to, nh);
		/* a holder asleep (how long it will hold), or under a
		 * timeout: ", sleeps in asyncio.sleep, wakes in 3598.5s," */
		if (graph_add_task_timers(&sb, c, &e->from, NULL, 1, 1))
			strbuf_addch(&sb, ',');
		strbuf_addstr(&sb, one_of ? " may hold " : " holds ");
		graph_add_label(&sb, c, e->to, GRAPH_ESCAPED);
		nw = py_waitgraph_waiters(g, e->to, NULL, 0);
		/* one line for a Condition and its lock, their waiters
		 * together */
		if (inner >= 0) {
			strbuf_addstr(&sb, " and its ");
			graph_add_label(&sb, c, g->edges[inner].to,
					GRAPH_ESCAPED);
			nw += py_waitgraph_waiters(g, g->edges[inner].to,
						   NULL, 0);
		}
		/* (said where it is another line than the frame's) */
		if (e->at && e->took_line > 0 && e->took_line != e->at->line &&
		    !graph_hold_in_library(c, e))
			strbuf_addf(&sb, ", taken at line %d", e->took_line);
		if (one_of)
			strbuf_addf(&sb, " (one of %zu that entered it: only "
				    "one can hold it)", nh);
		if (e->by_ident)
			strbuf_addstr(&sb, GRAPH_BY_IDENT);
		strbuf_addf(&sb, ": %zu waiting", nw);
		fprintf(out, "  %s\n", sb.buf);
	}
	for (i = 0; i < g->cycles.n; i++) {
		if (!i)
			fputs("\nWait cycles:\n", out);
		strbuf_reset(&sb);
		graph_add_cycle(&sb, c, i, GRAPH_ESCAPED);
		fprintf(out, "  %s\n", sb.buf);
	}
	if (g->test) {
		/* (the node id names the test's file: the target's to choose) */
		fputs("\nTest being run: ", out);
		esc_put(out, g->test, ESC_NAME, 0);
		fputc('\n', out);
	}
	free(merged);
	free(said);
	strbuf_release(&sb);
}
