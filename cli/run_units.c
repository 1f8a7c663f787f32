/*
 * The lines `run`'s causes say of a thread, task or greenlet of the
 * wait-for graph (cli/run_graph.c): its label, where it is, how long
 * the samples saw it stuck, a task's timers and the tasks awaiting it,
 * a thread's source line; and of a cause's waiters, alike ones as one
 * line.
 */
#include "cli/run_units.h"

#include <stdlib.h>
#include <string.h>

#include "cli/alike_lines.h"
#include "cli/report_graph.h"
#include "cli/timer_text.h"
#include "readers/code.h"
#include "common/banned.h"

/* What the samples saw of a thread or task node. */
void run_node_seen(const struct collection *c, const struct watch_tracker *t,
		   size_t node, struct run_seen *out)
{
	const struct wg_node *n = &c->graph.nodes[node];

	if (n->kind == WG_TASK)
		run_seen_task(t, c->async.tasks[n->index].addr, out);
	else if (n->kind == WG_THREAD)
		run_seen_thread(t, &c->snap.threads[n->index], out);
	else if (n->kind == WG_GREENLET)
		run_seen_item(t, t ? watch_find(t, WATCH_GREENLET,
						c->greenlets.v[n->index].addr) :
				 NULL, out);
	else
		memset(out, 0, sizeof(*out));
}

/* The source line of the frame the graph blames a thread node on
 * (facts: per thread of the snapshot, or NULL). */
static const char *unit_source(const struct collection *c,
			       const struct run_thread_facts *facts,
			       size_t node)
{
	const struct wg_node *n = &c->graph.nodes[node];

	if (!facts || n->kind != WG_THREAD || !n->blame ||
	    n->index >= c->snap.nthreads || facts[n->index].hide_source)
		return NULL;
	if (run_causes_own_frame(&c->snap.threads[n->index]) == n->blame)
		return facts[n->index].source;
	return facts[n->index].blame_source;
}

/* A frame's file (whole: the line shows its base name), line and
 * function, each after its length, for a key. */
static void key_frame(struct strbuf *sb, const struct py_frame *f)
{
	alike_lines_key_str(sb, f && f->code ? f->code->filename : NULL);
	alike_lines_key_str(sb, f && f->code ? f->code->qualname : NULL);
	strbuf_addf(sb, "%d;", f ? f->line : -2);
}

/* How a task's timers go into its detail: not at all (a group's first
 * task: the group's span follows), as words for an alike key, with
 * their times. */
enum unit_timers { TIMERS_NONE, TIMERS_KEY, TIMERS_TIMES };

/* A task's timers in a unit's detail (graph_add_task_timers()). */
static void add_tasks_timers(struct strbuf *sb, const struct collection *c,
			     const size_t *nodes, const size_t *m, size_t n,
			     enum unit_timers how)
{
	if (how != TIMERS_NONE)
		(void)graph_add_task_timers(sb, c, nodes, m, n,
					    how == TIMERS_TIMES);
}

/* The sleeps or timed waits of alike thread nodes nodes[m[0..n)] (their
 * key has the kind), as a span; nothing for tasks. */
static void add_threads_timers(struct strbuf *sb, const struct collection *c,
			       const size_t *nodes, const size_t *m, size_t n,
			       const struct run_thread_facts *facts)
{
	const struct run_thread_facts **f;
	size_t k;

	if (!facts || !n)
		return;
	f = xmallocarray(n, sizeof(*f));
	for (k = 0; k < n; k++) {
		const struct wg_node *nd = &c->graph.nodes[nodes[m[k]]];

		if (nd->kind != WG_THREAD || nd->index >= c->snap.nthreads) {
			free(f);
			return;
		}
		f[k] = &facts[nd->index];
	}
	run_add_threads_timer(sb, f, n);
	free(f);
}

/* A thread's or task's detail after its label: where, for how long, a
 * task's timers, and a thread's own line's source (not with
 * TIMERS_NONE: a group's comes after the group's timers). */
/* A program whose main code ended: the join is the exit's, its
 * outermost frame threading's _shutdown or, before 3.9, the atexit hook
 * of concurrent.futures, which joins its executors' workers. */
static void add_at_exit(struct strbuf *sb, const struct py_thread *th)
{
	const struct py_code *code;

	if (!th->nframes)
		return;
	code = th->frames[th->nframes - 1].code;
	if (py_code_is(code, "/threading.py", "_shutdown"))
		strbuf_addstr(sb, ", at the interpreter's exit, which waits "
			      "for every thread not a daemon");
	else if (py_code_is(code, "/concurrent/futures/thread.py",
			    "_python_exit"))
		strbuf_addstr(sb, ", at the interpreter's exit, which joins "
			      "the executors' worker threads");
}

/* A thread waiting on something, running between samples but at one
 * line at every one: its wait ended and it waited again there (`while
 * not lock.acquire(timeout=0.3)`; a queue's consumer, fed). */
static int waits_again(const struct collection *c, size_t node,
		       const struct run_seen *seen)
{
	const struct wg_node *nd = &c->graph.nodes[node];

	return seen->state == RUN_SEEN_MOVING && nd->kind == WG_THREAD &&
	       py_waitgraph_waits(&c->graph, node) &&
	       run_seen_same_for(seen) > 0;
}

static void add_unit_rest(struct strbuf *sb, const struct collection *c,
			  const struct watch_tracker *t, size_t node,
			  const struct run_thread_facts *facts,
			  enum unit_timers timers)
{
	const char *source = unit_source(c, facts, node);
	const struct wg_node *nd = &c->graph.nodes[node];
	struct run_seen seen;

	graph_add_blame(sb, c, node, GRAPH_RAW);
	run_node_seen(c, t, node, &seen);
	/* (busy only on a detail line: its share differs among alike) */
	if (seen.state == RUN_SEEN_STUCK ||
	    (seen.state == RUN_SEEN_BUSY && timers == TIMERS_TIMES)) {
		strbuf_addstr(sb, " (");
		run_seen_add(sb, &seen);
		strbuf_addch(sb, ')');
	} else if (timers == TIMERS_TIMES && waits_again(c, node, &seen)) {
		strbuf_addf(sb, " (woke and waited again %s, %.1fs)",
			    run_seen_same_place(&seen),
			    run_seen_same_for(&seen));
	}
	/* a thread that waits on nothing the graph sees: the C call it is
	 * blocked in (recv(), a C library's wait) says what */
	if (facts && timers == TIMERS_TIMES && nd->kind == WG_THREAD &&
	    nd->index < c->snap.nthreads && !py_waitgraph_waits(&c->graph, node) &&
	    facts[nd->index].native_call &&
	    facts[nd->index].timer != RUN_TIMER_SLEEP)
		strbuf_addf(sb, ", in C: %s()", facts[nd->index].native_call);
	add_tasks_timers(sb, c, &node, NULL, 1, timers);
	/* a thread's sleep or timed wait (its facts' words; a key only
	 * whether it has one, as tasks') */
	if (facts && c->graph.nodes[node].kind == WG_THREAD &&
	    c->graph.nodes[node].index < c->snap.nthreads) {
		const struct run_thread_facts *f =
			&facts[c->graph.nodes[node].index];

		if (timers == TIMERS_TIMES) {
			run_add_thread_timer(sb, f);
			if (f->timer == RUN_TIMER_TIMEOUT)
				run_seen_add_timed_again(sb, &seen);
		}
		else if (timers == TIMERS_KEY)
			strbuf_addf(sb, ";timer %d", f->timer);
	}
	if (timers == TIMERS_TIMES && nd->kind == WG_THREAD &&
	    nd->index < c->snap.nthreads)
		add_at_exit(sb, &c->snap.threads[nd->index]);
	if (source && timers != TIMERS_NONE)
		strbuf_addf(sb, ": %s", source);
}

/* Waiters of a task looked at for the tasks among them. */
#define AWAITERS_LOOKED_AT 9

/* The task nodes waiting on task node into w (at most max); how many
 * of the first AWAITERS_LOOKED_AT waiters are tasks, and into *more
 * whether there are waiters past those. */
static size_t task_awaiters(const struct collection *c, size_t node,
			    size_t *w, size_t max, int *more)
{
	size_t all[AWAITERS_LOOKED_AT], n, k, nt = 0;

	n = py_waitgraph_waiters(&c->graph, node, all, AWAITERS_LOOKED_AT);
	for (k = 0; k < n && k < AWAITERS_LOOKED_AT; k++) {
		if (c->graph.nodes[all[k]].kind != WG_TASK)
			continue;
		if (nt < max)
			w[nt] = all[k];
		nt++;
	}
	if (more)
		*more = n > AWAITERS_LOOKED_AT;
	return nt;
}

/*
 * " awaited by task 'Task-5' at app.py:19 in fast, times out in 119.0s"
 * of task nodes nodes[m[0..n)] that other tasks await: the task
 * wait_for() wraps a coroutine in up to 3.11 has only the library's
 * frames, its awaiter the user's line and the timeout.  Alike tasks
 * (n > 1) say where the first one's awaiter is, and their awaiters'
 * timers as a span; their key has that place (TIMERS_KEY).
 */
static void add_task_awaiters(struct strbuf *sb, const struct collection *c,
			      const size_t *nodes, const size_t *m, size_t n,
			      enum unit_timers how)
{
	size_t w[2], *first, k, nw;
	int more;

	if (c->graph.nodes[nodes[m[0]]].kind != WG_TASK)
		return;
	nw = task_awaiters(c, nodes[m[0]], w, 2, &more);
	if (!nw)
		return;
	if (how == TIMERS_KEY) {
		strbuf_addf(sb, ";awaited by %zu%s", nw, more ? "+" : "");
		key_frame(sb, c->graph.nodes[w[0]].blame);
		key_frame(sb, c->graph.nodes[w[0]].inner);
		add_tasks_timers(sb, c, w, NULL, 1, TIMERS_KEY);
		return;
	}
	if (n > 1) {
		/* each one's first awaiter, for their timers */
		first = xmallocarray(n, sizeof(*first));
		for (k = 0; k < n; k++)
			if (!task_awaiters(c, nodes[m[k]], &first[k], 1, NULL))
				first[k] = w[0];
		/* (alike: each awaited by as many, their key says) */
		if (nw == 1)
			strbuf_addstr(sb, ", each awaited by a task");
		else
			strbuf_addf(sb, ", each awaited by %zu%s tasks, the "
				    "first", nw, more ? " or more" : "");
		graph_add_blame(sb, c, w[0], GRAPH_RAW);
		add_tasks_timers(sb, c, first, NULL, n, how);
		free(first);
		return;
	}
	for (k = 0; k < nw && k < 2; k++) {
		strbuf_addstr(sb, k ? "; " : ", awaited by ");
		graph_add_label(sb, c, w[k], GRAPH_RAW);
		graph_add_blame(sb, c, w[k], GRAPH_RAW);
		add_tasks_timers(sb, c, &w[k], NULL, 1, how);
	}
	if (nw > 2)
		strbuf_addf(sb, " and %zu%s more", nw - 2,
			    more ? " or more" : "");
	else if (more)
		strbuf_addstr(sb, " and maybe more");
}

/* " waited on by thread N (name) at app.py:9 in f, ..." of an object
 * that waits itself (a pool's result waits for its workers): who is
 * behind it, at most four. */
static void add_object_waiters(struct strbuf *sb, const struct collection *c,
			       size_t obj)
{
	size_t w[5], n, k;

	n = py_waitgraph_waiters(&c->graph, obj, w, 5);
	for (k = 0; k < n && k < 4; k++) {
		strbuf_addstr(sb, k ? ", " : " waited on by ");
		graph_add_label(sb, c, w[k], GRAPH_RAW);
		graph_add_blame(sb, c, w[k], GRAPH_RAW);
	}
	if (n > 4)
		strbuf_addstr(sb, " and more");
}

void run_unit_detail(struct run_cause *cause, const struct collection *c,
		     const struct watch_tracker *t, size_t node,
		     const struct run_thread_facts *facts, struct strbuf *sb)
{
	static const size_t zero;

	graph_add_label(sb, c, node, GRAPH_RAW);
	add_unit_rest(sb, c, t, node, facts, TIMERS_TIMES);
	add_task_awaiters(sb, c, &node, &zero, 1, TIMERS_TIMES);
	if (c->graph.nodes[node].kind == WG_OBJECT)
		add_object_waiters(sb, c, node);
	run_cause_detail(cause, sb);
}

/* The members of alike waiters nodes[m[0..n)]: all threads or all
 * tasks (an object's key keeps it apart). */
static void add_group_members(struct strbuf *sb, const struct collection *c,
			      const size_t *nodes, const size_t *m, size_t n)
{
	enum wg_kind kind = c->graph.nodes[nodes[m[0]]].kind;
	int tasks = kind != WG_THREAD;  /* named, no kernel id */
	unsigned long long *ids = xmallocarray(n, sizeof(*ids));
	const char **names = xmallocarray(n, sizeof(*names));
	size_t k;

	for (k = 0; k < n; k++) {
		const struct wg_node *nd = &c->graph.nodes[nodes[m[k]]];

		if (nd->kind == WG_OBJECT)
			CS_BUG("an object among alike waiters");
		if (kind == WG_GREENLET) {
			names[k] = c->greenlets.v[nd->index].name ?
				   c->greenlets.v[nd->index].name :
				   c->greenlets.v[nd->index].function;
		} else if (tasks) {
			names[k] = c->async.tasks[nd->index].name;
		} else {
			ids[k] = (unsigned long long)
				 c->snap.threads[nd->index].tid;
			names[k] = c->snap.threads[nd->index].name;
		}
	}
	alike_lines_members(sb, tasks ? NULL : ids, names, n, ALIKE_GRAPH);
	free(ids);
	free(names);
}

/* What makes waiter node alike another: its kind and its frames, as the
 * dump compares tasks (the same text: two code objects compiled from
 * one source are alike), then its line but for the label.  An object
 * waiting is alike none. */
static char *waiter_key(const struct collection *c,
			const struct watch_tracker *t, size_t node,
			const struct run_thread_facts *facts)
{
	static const size_t zero;
	const struct wg_node *nd = &c->graph.nodes[node];
	struct strbuf sb;

	strbuf_init(&sb);
	if (nd->kind == WG_OBJECT) {
		strbuf_addf(&sb, "o%zu", node);
		return strbuf_detach(&sb);
	}
	strbuf_addch(&sb, nd->kind == WG_TASK ? 'T' :
			  nd->kind == WG_GREENLET ? 'G' : 't');
	key_frame(&sb, nd->blame);
	key_frame(&sb, nd->inner);
	add_unit_rest(&sb, c, t, node, facts, TIMERS_KEY);
	add_task_awaiters(&sb, c, &node, &zero, 1, TIMERS_KEY);
	return strbuf_detach(&sb);
}

/*
 * A detail line for each of the nw waiters; three or more alike
 * (threads, or tasks, at the same place and stuck as long: a pool's
 * workers, a server's handlers) share one unless --all: "12 threads at
 * app.py:9 in work (stuck for 3.0s): 101 (w-0), ... and 7 more".
 */
void run_unit_waiters(struct run_cause *cause, const struct collection *c,
		      const struct watch_tracker *t, const size_t *w,
		      size_t nw, const struct run_summary *s,
		      struct strbuf *sb)
{
	char **keys = xmallocarray(nw ? nw : 1, sizeof(*keys));
	struct alike_lines g;
	const char *source;
	size_t k;

	for (k = 0; k < nw; k++)
		keys[k] = waiter_key(c, t, w[k], s->facts);
	alike_lines_group(&g, keys, nw, s->apart);
	for (k = 0; k < g.ngroups; k++) {
		const size_t *m = g.member + g.first[k];
		size_t n = g.first[k + 1] - g.first[k];

		if (n == 1) {
			run_unit_detail(cause, c, t, w[m[0]], s->facts, sb);
			continue;
		}
		strbuf_addf(sb, "%zu %s", n,
			    c->graph.nodes[w[m[0]]].kind == WG_TASK ?
			    "tasks" :
			    c->graph.nodes[w[m[0]]].kind == WG_GREENLET ?
			    "greenlets" : "threads");
		add_unit_rest(sb, c, t, w[m[0]], s->facts, TIMERS_NONE);
		add_tasks_timers(sb, c, w, m, n, TIMERS_TIMES);
		add_threads_timers(sb, c, w, m, n, s->facts);
		/* (the first's line's source, after the timers: alike, the
		 * same line) */
		source = unit_source(c, s->facts, w[m[0]]);
		if (source)
			strbuf_addf(sb, ": %s", source);
		add_task_awaiters(sb, c, w, m, n, TIMERS_TIMES);
		/* (a line ending in its own colon, "with lk:", not then
		 * "with lk:: 101 (w-0)") */
		strbuf_addstr(sb, sb->len && sb->buf[sb->len - 1] == ':' ?
				  " -- " : ": ");
		add_group_members(sb, c, w, m, n);
		run_cause_detail(cause, sb);
	}
	alike_lines_release(&g);
}

/* Is e the edge from a future to the unit completing it (a concurrent
 * future to the thread running its job, a Thread to the thread it
 * runs as)? */
static int completes(const struct py_waitgraph *g, const struct wg_edge *e)
{
	const struct py_prim *p;

	if (e->kind != WG_WAITS_FOR || e->from >= g->nnodes ||
	    g->nodes[e->from].kind != WG_OBJECT)
		return 0;
	p = &g->prims[g->nodes[e->from].index];
	return p->kind == PY_PRIM_CFUTURE || p->kind == PY_PRIM_THREAD;
}

/* Waiters of one future looked at. */
#define BEHIND_FUTURE_WAITERS 8

size_t run_units_behind(const struct collection *c, const size_t *w,
			size_t nw, struct run_behind *out, size_t max)
{
	const struct py_waitgraph *g = &c->graph;
	unsigned char *seen;
	size_t *queue;
	size_t head = 0, tail = 0, n = 0, k, j, m, nws;
	size_t ws[BEHIND_FUTURE_WAITERS];
	const size_t *in;

	/* (most causes have none: no arrays the graph's size for them, one
	 * cause per object of a large graph) */
	for (k = 0; k < nw && !n; k++) {
		in = w[k] < g->nnodes ? py_waitgraph_in(g, w[k], &m) : NULL;
		for (j = 0; in && j < m && !n; j++)
			n = completes(g, &g->edges[in[j]]);
	}
	if (!n)
		return 0;
	n = 0;
	seen = xcalloc(g->nnodes + 1, 1);
	queue = xcalloc(g->nnodes + 1, sizeof(*queue));
	for (k = 0; k < nw && tail < g->nnodes; k++)
		if (w[k] < g->nnodes && !seen[w[k]] &&
		    g->nodes[w[k]].kind != WG_OBJECT) {
			seen[w[k]] = 1;
			queue[tail++] = w[k];
		}
	/* (each node queued once: the walk ends) */
	while (head < tail) {
		size_t via = queue[head++];

		in = py_waitgraph_in(g, via, &m);
		for (k = 0; k < m; k++) {
			const struct wg_edge *e = &g->edges[in[k]];

			if (!completes(g, e))
				continue;
			nws = py_waitgraph_waiters(g, e->from, ws,
						   BEHIND_FUTURE_WAITERS);
			for (j = 0; j < nws && j < BEHIND_FUTURE_WAITERS;
			     j++) {
				size_t u = ws[j];

				/* (a task waiting so has its stuck-task
				 * cause, naming the job's thread) */
				if (u >= g->nnodes || seen[u] ||
				    g->nodes[u].kind != WG_THREAD)
					continue;
				seen[u] = 1;
				queue[tail++] = u;
				if (n < max) {
					out[n].unit = u;
					out[n].fut = e->from;
					out[n].via = via;
				}
				n++;
			}
		}
	}
	free(queue);
	free(seen);
	return n;
}
