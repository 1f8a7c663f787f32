#include "cli/run_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cli/report_graph.h"
#include "cli/run_child_places.h"
#include "cli/run_fork_copies.h"
#include "cli/run_forever.h"
#include "cli/run_queue_join.h"
#include "cli/run_pool.h"
#include "cli/run_probe.h"
#include "cli/run_reads.h"
#include "cli/run_retries.h"
#include "cli/run_seen.h"
#include "cli/run_units.h"
#include "cli/thread_idle.h"
#include "common/addrmap.h"
#include "common/banned.h"

/* Does the cycle go through an object (locks: through a lock, a lock
 * cycle; else through no lock, only futures, threads joined or queues,
 * a wait cycle: an executor's job waiting for a job queued behind
 * it)? */
static int cycle_through(const struct py_waitgraph *g, size_t cycle,
			 int locks)
{
	size_t k;

	for (k = 0; k < g->cycles.len[cycle]; k++) {
		const struct wg_node *n = &g->nodes[g->cycles.cycles[cycle][k]];

		if (n->kind == WG_OBJECT &&
		    (!locks || py_prim_is_lock(&g->prims[n->index])))
			return 1;
	}
	return 0;
}

static int has_object(const struct py_waitgraph *g, size_t cycle)
{
	return cycle_through(g, cycle, 0);
}

/* A node's task or thread, into out (NULL: none), when it is one: the
 * tasks (by address) and threads (by thread state, unless only tasks)
 * the graph's causes name (run_summarize_graph()); for an object that
 * waits itself (a pool's result), the units waiting on it. */
static void add_named(const struct collection *c, size_t node,
		      struct addrmap *out, int only_tasks)
{
	const struct wg_node *n = &c->graph.nodes[node];
	size_t w[4], nw, k;

	if (!out)
		return;
	if (n->kind == WG_TASK && n->index < c->async.ntasks)
		addrmap_add(out, c->async.tasks[n->index].addr);
	if (!only_tasks && n->kind == WG_GREENLET &&
	    n->index < c->greenlets.n)
		addrmap_add(out, c->greenlets.v[n->index].addr);
	if (!only_tasks && n->kind == WG_THREAD &&
	    n->index < c->snap.nthreads && c->snap.threads[n->index].tstate)
		addrmap_add(out, c->snap.threads[n->index].tstate);
	if (n->kind != WG_OBJECT)
		return;
	/* (as many as run_unit_detail() names of an object's waiters) */
	nw = py_waitgraph_waiters(&c->graph, node, w, 4);
	for (k = 0; k < nw && k < 4; k++)
		if (c->graph.nodes[w[k]].kind != WG_OBJECT)
			add_named(c, w[k], out, only_tasks);
}

static void add_task_of(const struct collection *c, size_t node,
			struct addrmap *out)
{
	add_named(c, node, out, 0);
}

/* Room for the pool's workers named under a cycle. */
#define POOL_WORKERS_NAMED 8

static int in_cycle(const struct py_waitgraph *g, size_t cycle, size_t node)
{
	size_t k;

	for (k = 0; k < g->cycles.len[cycle]; k++)
		if (g->cycles.cycles[cycle][k] == node)
			return 1;
	return 0;
}

/* A job queued in a ThreadPoolExecutor, on the cycle, waits for the
 * first free of the pool's workers: the graph counts that wait in a
 * cycle only when none of them will be free (readers/waitgraph_any.c),
 * so each is as stuck as the cycle's own.  Where a pool has more than
 * one, the headline says so once (the cycle named is one path through
 * them), and each worker off that path gets its line, once, at most
 * POOL_WORKERS_NAMED of them: without a cause, the headline's words,
 * else the lines. */
static void pool_workers(struct run_cause *cause, const struct run_summary *s,
			 const struct collection *c,
			 const struct watch_tracker *t, size_t cycle,
			 struct addrmap *named, struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	size_t k, j, m, shown[POOL_WORKERS_NAMED], nshown = 0, q, jobs = 0;
	size_t first = 0;

	for (k = 0; k < g->cycles.len[cycle]; k++) {
		size_t fut = g->cycles.cycles[cycle][k];
		const size_t *out = py_waitgraph_out(g, fut, &m);

		if (g->nodes[fut].kind != WG_OBJECT ||
		    !g->prims[g->nodes[fut].index].queued || m < 2)
			continue;
		if (!jobs++)
			first = m;
		for (j = 0; cause && j < m; j++) {
			size_t w = g->edges[out[j]].to;

			for (q = 0; q < nshown && shown[q] != w; q++)
				;
			if (q < nshown || in_cycle(g, cycle, w))
				continue;
			if (nshown == POOL_WORKERS_NAMED)
				return;
			shown[nshown++] = w;
			add_task_of(c, w, named);
			strbuf_addstr(sb, "and its pool's ");
			run_unit_detail(cause, c, t, w, s->facts, sb);
		}
	}
	if (cause || !jobs)
		return;
	if (jobs == 1)
		strbuf_addf(sb, "; its job is queued for the first free of its "
			    "pool's %zu workers, all stuck", first);
	else
		strbuf_addf(sb, "; its %zu jobs are each queued for the first "
			    "free of their pool's workers, all stuck", jobs);
}

/* "holding threading.Lock 0x.. (locked) since app.py:5 in f: with a:",
 * a line of the cause after unit's: where unit took obj, the object
 * before it in a cycle, when that is known. */
static void add_taken(struct run_cause *cause, const struct collection *c,
		      size_t obj, size_t unit, struct strbuf *sb)
{
	const struct py_frame *at;
	char *source;
	int line;

	if (c->graph.nodes[obj].kind != WG_OBJECT ||
	    !(at = graph_took_at(c, obj, unit, &line)))
		return;
	strbuf_addstr(sb, "holding ");
	graph_add_label(sb, c, obj, GRAPH_RAW);
	strbuf_addstr(sb, " since ");
	graph_add_place_line(sb, at, line, GRAPH_RAW);
	source = run_probe_source(c, at->code->filename, line);
	if (source)
		strbuf_addf(sb, ": %s", source);
	free(source);
	run_cause_detail(cause, sb);
}

/* A cause per cycle of waits through an object (a lock each holds
 * that the next waits for), then a line per thread or task of it: where
 * it is, how long it has been stuck, its line's source.  What each
 * waits for and who holds that is the headline's chain. */
static void cycles(struct run_summary *s, const struct collection *c,
		   const struct watch_tracker *t, struct addrmap *named,
		   struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i, k;

	for (i = 0; i < g->cycles.n; i++) {
		struct run_cause *cause;

		/* Tasks awaiting each other are await cycles already. */
		if (!has_object(g, i))
			continue;
		strbuf_addstr(sb, cycle_through(g, i, 1) ? "lock cycle: " :
				  "wait cycle: ");
		graph_add_cycle(sb, c, i, GRAPH_RAW);
		pool_workers(NULL, s, c, t, i, named, sb);
		cause = run_cause_add(s, RUN_CAUSE_LOCK_CYCLE, c->pid, sb);
		for (k = 0; k < g->cycles.len[i]; k++) {
			size_t node = g->cycles.cycles[i][k];

			if (g->nodes[node].kind == WG_OBJECT)
				continue;
			add_task_of(c, node, named);
			run_unit_detail(cause, c, t, node, s->facts, sb);
			add_taken(cause, c, g->cycles.cycles[i][
				  (k + g->cycles.len[i] - 1) % g->cycles.len[i]],
				  node, sb);
		}
		pool_workers(cause, s, c, t, i, named, sb);
		run_cause_test(cause, c->graph.test, sb);
	}
}

/* A thread node of a loop that waits for work by design (an executor's
 * or anyio's idle worker in its queue's get()): its wait is an idle
 * one, as a server's rest is. */
static int unit_idle_by_design(const struct collection *c, size_t node)
{
	const struct wg_node *n = &c->graph.nodes[node];

	return n->kind == WG_THREAD && n->index < c->snap.nthreads &&
	       thread_idle_by_design(&c->snap.threads[n->index]) != NULL;
}

struct ranked {
	size_t node, waiters, idle;
	size_t behind;     /* threads and tasks blocked by it in all */
	double stuck;      /* the longest a waiter has been stuck, sampled */
	int main;          /* a main unit (main_units()) is blocked by it */
	int forever;       /* its only waiter, a main task, waits for ever
			      by design (run_forever_by_design()) */
};

/* Frames of the main thread looked at for run_until_complete(). */
#define MAIN_FRAMES_LOOKED_AT 64

/* The nodes of the units the program's end waits for, into out[0..2):
 * the process's main thread, and the task its run_until_complete()
 * runs (asyncio.run()'s main task: that frame's local `future`); -1
 * where none.  A cause that blocks one of them ranks before those that
 * block only others: a worker parked in its queue's get(), a fixture's
 * watcher thread waiting to be told to stop, wait as long as the hang
 * that keeps the program from its end, and are no cause of it. */
static void main_units(const struct collection *c, long out[2])
{
	const struct py_thread *th = NULL;
	uint64_t fut = 0;
	size_t i;

	out[0] = out[1] = -1;
	for (i = 0; i < c->snap.nthreads && !th; i++)
		if (c->snap.threads[i].tid == c->pid) {
			th = &c->snap.threads[i];
			out[0] = py_waitgraph_node_of(&c->graph, WG_THREAD, i);
		}
	for (i = 0; th && i < th->nframes && i < MAIN_FRAMES_LOOKED_AT &&
		    !fut; i++)
		if (py_code_is(th->frames[i].code, "/asyncio/base_events.py",
			       "run_until_complete"))
			/* (reading caches what it decodes: the
			 * collection is as it was) */
			fut = py_frame_local((struct pyproc *)&c->py,
					     &th->frames[i], "future");
	for (i = 0; fut && i < c->async.ntasks; i++)
		if (c->async.tasks[i].addr == fut) {
			out[1] = py_waitgraph_node_of(&c->graph, WG_TASK, i);
			break;
		}
}

/* Does unit wait for obj directly? */
static int waits_on(const struct py_waitgraph *g, size_t unit, size_t obj)
{
	size_t k, m;
	const size_t *out = py_waitgraph_out(g, unit, &m);

	for (k = 0; k < m; k++)
		if (g->edges[out[k]].kind == WG_WAITS_FOR &&
		    g->edges[out[k]].to == obj)
			return 1;
	return 0;
}

/* First what blocks a main unit, then most blocked behind, then most
 * direct waiters, then longest stuck. */
static int by_blocked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->main != y->main)
		return x->main ? -1 : 1;
	if (x->behind != y->behind)
		return x->behind < y->behind ? 1 : -1;
	if (x->waiters != y->waiters)
		return x->waiters < y->waiters ? 1 : -1;
	if (x->stuck != y->stuck)
		return x->stuck < y->stuck ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * "Blocked by" as adjacency lists over the graph's nodes: a waits-for
 * edge a -> b means b blocks a; a holds edge h -> o means h blocks o
 * (whoever waits for o waits for h to go on).
 */
struct blockers {
	size_t *first;    /* nnodes + 1 offsets into next */
	size_t *next;
};

/* A hold that may not be one: a lock entered by more `with` blocks
 * than can hold it.  Who waits for the object is not counted as blocked
 * behind those holders.  (An RLock naming only a thread ident is said
 * unsure in the text but counted: a bare acquire(), logging's
 * Handler.handle(), is far the commoner reason.) */
static int hold_unsure(const struct collection *c, const struct wg_edge *e)
{
	return e->kind == WG_HOLDS &&
	       graph_holders_exclusive(c, e->to, py_waitgraph_holders(
					       &c->graph, e->to, NULL, 0));
}

static void blockers_build(const struct collection *c, struct blockers *bl)
{
	const struct py_waitgraph *g = &c->graph;
	unsigned char *skip = xcalloc(g->nedges + 1, 1);
	size_t i, *fill;

	bl->first = xcalloc(g->nnodes + 2, sizeof(*bl->first));
	bl->next = xcalloc(g->nedges + 1, sizeof(*bl->next));
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		size_t by = e->kind == WG_WAITS_FOR ? e->to : e->from;

		skip[i] = by >= g->nnodes || hold_unsure(c, e);
		if (!skip[i])
			bl->first[by + 1]++;
	}
	for (i = 0; i < g->nnodes; i++)
		bl->first[i + 1] += bl->first[i];
	fill = xcalloc(g->nnodes + 1, sizeof(*fill));
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		size_t by = e->kind == WG_WAITS_FOR ? e->to : e->from;
		size_t it = e->kind == WG_WAITS_FOR ? e->from : e->to;

		if (!skip[i])
			bl->next[bl->first[by] + fill[by]++] = it;
	}
	free(fill);
	free(skip);
}

static void blockers_release(struct blockers *bl)
{
	free(bl->first);
	free(bl->next);
}

/* Threads and tasks blocked by node, directly or through chains of
 * waits (each counted once; the walk visits each node once). */
static size_t blocked_behind(const struct py_waitgraph *g,
			     const struct blockers *bl, size_t node,
			     unsigned char *seen, size_t *work)
{
	size_t n = 0, nwork = 0, i;

	memset(seen, 0, g->nnodes);
	seen[node] = 1;
	work[nwork++] = node;
	while (nwork) {
		size_t cur = work[--nwork];

		for (i = bl->first[cur]; i < bl->first[cur + 1]; i++) {
			size_t w = bl->next[i];

			if (w >= g->nnodes || seen[w])
				continue;
			seen[w] = 1;
			n += g->nodes[w].kind != WG_OBJECT;
			work[nwork++] = w;
		}
	}
	return n;
}

/* The transitive walk costs objects x (nodes + edges): past this, the
 * direct waiters alone rank the causes. */
#define MAX_CHAIN_WORK 20000000.0

/* Is node part of a cycle through locks (reported as such already)? */
static int in_lock_cycle(const struct py_waitgraph *g, size_t node)
{
	size_t i, k;

	for (i = 0; i < g->cycles.n; i++)
		for (k = 0; has_object(g, i) && k < g->cycles.len[i]; k++)
			if (g->cycles.cycles[i][k] == node)
				return 1;
	return 0;
}

/* Waiters of a future looked at for a thread among them. */
#define CHAIN_END_WAITERS 8

/* What ends_chain() finds of a future. */
enum { CHAIN_GOES_ON, CHAIN_ENDS, CHAIN_ENDS_IDLE };

/* Does a thread wait on future node obj directly, in a wait for it alone
 * (not the first of several: concurrent.futures.wait(), as_completed())? */
static int thread_waits_alone(const struct py_waitgraph *g, size_t obj)
{
	size_t k, m;
	const size_t *in = py_waitgraph_in(g, obj, &m);

	for (k = 0; k < m && k < CHAIN_END_WAITERS; k++) {
		const struct wg_edge *e = &g->edges[in[k]];

		if (e->kind == WG_WAITS_FOR && !e->any && e->from < g->nnodes &&
		    g->nodes[e->from].kind == WG_THREAD)
			return 1;
	}
	return 0;
}

/*
 * A concurrent future running its job or a thread joined, that a thread
 * waits on alone, and whose every unit to complete it (the job's worker
 * thread, the thread joined) waits on nothing the graph sees and was seen
 * make no progress: blocked reading a socket, asleep.  The chain of waits
 * ends there, so it is a cause (CHAIN_ENDS_IDLE where those units wait
 * for work by design: a server's accept()).  Otherwise CHAIN_GOES_ON:
 * what those units wait on is a cause of its own, a busy one is (cli/
 * run_causes.c), a moving one is no hang, a coroutine scheduled for a
 * loop waits for that loop.  A job still queued ends the chain where
 * every worker of its pool (what it waits for the first free of) is
 * stuck so, on other jobs.  A task's wait on such a future is its
 * stuck-task cause (cli/run_stuck.c).
 */
static int ends_chain(const struct collection *c,
		      const struct watch_tracker *t, size_t obj)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p = &g->prims[g->nodes[obj].index];
	size_t k, m, n = 0, idle = 0;
	const size_t *out;
	struct run_seen seen;

	if ((p->kind != PY_PRIM_CFUTURE && p->kind != PY_PRIM_THREAD) ||
	    p->scheduled || !thread_waits_alone(g, obj))
		return CHAIN_GOES_ON;
	out = py_waitgraph_out(g, obj, &m);
	for (k = 0; k < m; k++) {
		const struct wg_edge *e = &g->edges[out[k]];

		if (e->kind != WG_WAITS_FOR)
			continue;
		if (e->to >= g->nnodes || g->nodes[e->to].kind == WG_OBJECT ||
		    py_waitgraph_waits(g, e->to))
			return CHAIN_GOES_ON;
		run_node_seen(c, t, e->to, &seen);
		if (seen.state == RUN_SEEN_MOVING ||
		    seen.state == RUN_SEEN_BUSY)
			return CHAIN_GOES_ON;
		idle += g->nodes[e->to].idle || unit_idle_by_design(c, e->to);
		n++;
	}
	if (!n)
		return CHAIN_GOES_ON;
	return idle == n ? CHAIN_ENDS_IDLE : CHAIN_ENDS;
}

/*
 * The objects someone waits on, except those in lock cycles (reported as
 * cycles) and those whose every waiter was seen moving (a queue being
 * fed; not a lock retried while its holders stood still): r[] gets them
 * with their waiters' counts; returns how many.
 */
static size_t rank_held(const struct collection *c,
			const struct watch_tracker *t, struct ranked *r,
			size_t *w)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i, k, n = 0, *work, nobj = 0;
	struct blockers bl = { NULL, NULL };
	unsigned char *seen;
	int chains;
	long mains[2];

	work = xcalloc(g->nnodes + 1, sizeof(*work));
	seen = xcalloc(g->nnodes + 1, 1);
	for (i = 0; i < g->nnodes; i++)
		nobj += g->nodes[i].kind == WG_OBJECT;
	chains = (double)nobj * (double)(g->nnodes + g->nedges) <=
		 MAX_CHAIN_WORK;
	if (chains)
		blockers_build(c, &bl);
	main_units(c, mains);
	for (i = 0; i < g->nnodes; i++) {
		size_t nw, moving = 0, lib, holder;
		int end = CHAIN_GOES_ON;

		/* A gather or concurrent future is not a cause: what it
		 * waits for is, unless that waits on nothing. */
		if (g->nodes[i].kind != WG_OBJECT || in_lock_cycle(g, i))
			continue;
		if (py_prim_is_future(&g->prims[g->nodes[i].index]) &&
		    (end = ends_chain(c, t, i)) == CHAIN_GOES_ON)
			continue;
		nw = py_waitgraph_waiters(g, i, w, g->nnodes);
		if (!nw)
			continue;
		r[n].node = i;
		r[n].waiters = nw;
		for (k = 0, lib = 0; k < nw && k < g->nnodes; k++) {
			struct run_seen sn;

			lib += unit_idle_by_design(c, w[k]);
			r[n].idle += g->nodes[w[k]].idle ||
				     unit_idle_by_design(c, w[k]);
			run_node_seen(c, t, w[k], &sn);
			moving += sn.state == RUN_SEEN_MOVING &&
				  !run_retry_polls_unset_event(g, i, &sn);
			if (sn.state == RUN_SEEN_STUCK && sn.stuck_for > r[n].stuck)
				r[n].stuck = sn.stuck_for;
		}
		/* (only a library's threads waiting for work, a pool's
		 * handler, a queue's feeder, which the samples count apart;
		 * nobody holding it) */
		if ((moving == nw && !run_retry_holders_stuck(c, t, i)) ||
		    (lib == nw && !py_waitgraph_holders(g, i, &holder, 1))) {
			/* (the next object's entry starts afresh) */
			memset(&r[n], 0, sizeof(r[n]));
			continue;
		}
		/* (joining a server's listener, a server's connection
		 * waiting for its client: idle waits, ranked so) */
		if (end == CHAIN_ENDS_IDLE ||
		    g->prims[g->nodes[i].index].server_side == 1)
			r[n].idle = nw;
		r[n].behind = chains ? blocked_behind(g, &bl, i, seen, work) : nw;
		for (k = 0; k < 2; k++)
			r[n].main |= mains[k] >= 0 &&
				     (chains ? seen[mains[k]] :
				      waits_on(g, (size_t)mains[k], i));
		/* (its rest, ranked last: not what holds it up) */
		if (r[n].main && (r[n].forever = run_forever_by_design(c, i, w,
								       nw)))
			r[n].main = 0, r[n].idle = nw;
		n++;
	}
	if (chains)
		blockers_release(&bl);
	free(work);
	free(seen);
	return n;
}

/* A detail line for each unit completing future node fut (at most
 * four): "joined: thread 12 (w) at app.py:4 in work (stuck for at least
 * 2.5s), in C: recv(): sock.recv(10)"; "running its job: ...". */
static void future_units(struct run_cause *cause, const struct run_summary *s,
			 const struct collection *c,
			 const struct watch_tracker *t, size_t fut,
			 struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p = &g->prims[g->nodes[fut].index];
	size_t k, m, n = 0;
	const size_t *out;

	if (!py_prim_is_future(p))
		return;
	out = py_waitgraph_out(g, fut, &m);
	for (k = 0; k < m && n < 4; k++) {
		const struct wg_edge *e = &g->edges[out[k]];

		if (e->kind != WG_WAITS_FOR || e->to >= g->nnodes ||
		    g->nodes[e->to].kind == WG_OBJECT)
			continue;
		strbuf_addstr(sb, p->kind == PY_PRIM_THREAD ? "joined: " :
			      p->queued ? "its pool's worker, on another job: " :
			      "running its job: ");
		run_unit_detail(cause, c, t, e->to, s->facts, sb);
		run_reads_unit_call(cause, s, c, e->to, sb);
		n++;
	}
}

/* " held by X at line, Y ..." for up to four holders; how many hold. */
static size_t add_holders(struct strbuf *sb, const struct collection *c,
			  size_t node, size_t *holders)
{
	size_t nh;

	nh = py_waitgraph_holders(&c->graph, node, holders, 4);
	graph_add_holders(sb, c, node, holders, nh, 4, GRAPH_RAW);
	return nh;
}

/* Units named behind a cause's waiters. */
#define BEHIND_NAMED 4

/* A line for each thread waiting for a waiter to finish (the job it
 * runs, the thread joined), nearest first: "waiting for the job of
 * thread 12 (w): thread 10 (MainThread) at app.py:7 ...".  Their waits
 * are this cause's, not causes of their own. */
static void behind_waiters(struct run_cause *cause,
			   const struct run_summary *s,
			   const struct collection *c,
			   const struct watch_tracker *t, const size_t *w,
			   size_t nw, struct addrmap *named, int idle,
			   struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	struct run_behind b[BEHIND_NAMED];
	size_t k, n;

	n = run_units_behind(c, w, nw, b, BEHIND_NAMED);
	for (k = 0; k < n && k < BEHIND_NAMED; k++) {
		strbuf_addstr(sb, g->prims[g->nodes[b[k].fut].index].kind ==
				  PY_PRIM_THREAD ? "joining " :
				  g->nodes[b[k].via].kind == WG_THREAD ?
				  "waiting for the job of " :
				  "waiting for the result of ");
		graph_add_label(sb, c, b[k].via, GRAPH_RAW);
		strbuf_addstr(sb, ": ");
		add_named(c, b[k].unit, named, idle);
		run_unit_detail(cause, c, t, b[k].unit, s->facts, sb);
	}
	if (n > BEHIND_NAMED) {
		strbuf_addf(sb, "and %zu more thread%s behind them",
			    n - BEHIND_NAMED, n - BEHIND_NAMED == 1 ? "" : "s");
		run_cause_detail(cause, sb);
	}
}

/* sib[0..nsib): more objects the same units wait on the same way (a
 * pool's worker processes), named in the same cause. */
static void held_cause(struct run_summary *s, const struct collection *c,
		       const struct watch_tracker *t, const struct ranked *r,
		       const size_t *sib, size_t nsib, size_t *w,
		       struct addrmap *named, struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p = &g->prims[g->nodes[r->node].index];
	size_t nh, nw, h, k, holders[4];
	int idle = r->idle == r->waiters, jobs;
	struct run_cause *cause;

	if (idle)
		strbuf_addstr(sb, "idle: ");
	strbuf_addf(sb, "%zu waiting on ", r->waiters);
	graph_add_label(sb, c, r->node, GRAPH_RAW);
	for (k = 0; k < nsib && k < 7; k++) {
		strbuf_addstr(sb, ", ");
		graph_add_label(sb, c, sib[k], GRAPH_RAW);
	}
	if (nsib > 7)
		strbuf_addf(sb, " and %zu more", nsib - 7);
	nh = add_holders(sb, c, r->node, holders);
	if (!nh && py_prim_may_be_held(p))
		graph_add_no_holder(sb, c, p, ", ", GRAPH_RAW);
	/* (a future at a chain's end: who completes it) */
	if (py_prim_is_future(p))
		graph_add_future_waits(sb, c, r->node, GRAPH_RAW);
	if (r->behind > r->waiters)
		strbuf_addf(sb, "; %zu blocked behind it in all", r->behind);
	cause = run_cause_add(s, idle ? RUN_CAUSE_IDLE : RUN_CAUSE_HELD,
			      c->pid, sb);
	run_queue_join_detail(cause, c, r->node, sb);
	if (!nh)
		run_fork_holder(cause, s, c, p, sb);
	if (p->kind == PY_PRIM_STREAM)
		(void)run_reads_socket_detail(cause, s, c, p->fd, sb);
	run_reads_waiter_fds(cause, s, c, r->node, sb);
	/* Holders first (where they are stuck themselves), then every
	 * waiter: no cap. */
	for (h = 0; h < nh && h < 4; h++) {
		add_task_of(c, holders[h], named);
		strbuf_addstr(sb, "holder ");
		run_unit_detail(cause, c, t, holders[h], s->facts, sb);
		/* (the socket a holder waits to read, where it is parked
		 * in a stream's or gevent's socket call) */
		run_reads_unit_fd(cause, s, c, holders[h], 1, sb);
		/* (a holder is no stuck task of its own: its job here) */
		run_add_worker(cause, g, &c->snap, NULL, (long)holders[h],
			       NULL, sb);
	}
	future_units(cause, s, c, t, r->node, sb);
	/* child processes waited on: the ones still running a job */
	jobs = run_add_process_jobs(cause, s, g, &r->node, 1, sb);
	jobs |= run_add_process_jobs(cause, s, g, sib, nsib, sb);
	/* (a pool's workers all waiting for work: its job lost; a child
	 * of another kind: where it is) */
	if (!jobs && !run_add_pool_idle(cause, s, g, r->node, sib, nsib, sb))
		(void)run_add_child_places(cause, s, g, r->node, sib, nsib,
					   sb);
	run_reads_exited_child(cause, s, c, r->node, sb);
	nw = py_waitgraph_waiters(g, r->node, w, g->nnodes);
	nw = nw < g->nnodes ? nw : g->nnodes;
	/* An idle cause (a server's rest, ranked last) names its threads
	 * without taking their own causes away: a handler stuck in a
	 * wait below serve_forever is idle by the graph's rule. */
	for (k = 0; k < nw; k++)
		add_named(c, w[k], named, idle);
	run_unit_waiters(cause, c, t, w, nw, s, sb);
	if (r->forever)
		run_forever_detail(cause, sb);
	behind_waiters(cause, s, c, t, w, nw, named, idle, sb);
	/* (not under a fixture's watcher thread waiting to be told to
	 * stop, say: the test runs on the main thread) */
	if (!idle && r->main)
		run_cause_test(cause, c->graph.test, sb);
}

/* Worker processes compared for a pool's cause, and waiters each. */
#define MAX_SIBLINGS 1024
#define SIBLING_WAITERS 16

/*
 * The child processes ranked after r[i] that the same units wait on
 * (a pool's workers, which its results all wait for), into sib, marked
 * merged: one cause for a pool, not one per worker.  Only a process
 * with few waiters is compared, and only so many.
 */
static size_t siblings(const struct py_waitgraph *g, const struct ranked *r,
		       size_t n, size_t i, unsigned char *merged, size_t *sib)
{
	size_t a[SIBLING_WAITERS], b[SIBLING_WAITERS], na, nb, j, nsib = 0;

	if (g->prims[g->nodes[r[i].node].index].kind != PY_PRIM_PROCESS)
		return 0;
	na = py_waitgraph_waiters(g, r[i].node, a, SIBLING_WAITERS);
	if (!na || na > SIBLING_WAITERS)
		return 0;
	for (j = i + 1; j < n && j - i <= MAX_SIBLINGS; j++) {
		if (merged[j] || g->prims[g->nodes[r[j].node].index].kind !=
				 PY_PRIM_PROCESS)
			continue;
		nb = py_waitgraph_waiters(g, r[j].node, b, SIBLING_WAITERS);
		if (nb != na || memcmp(a, b, na * sizeof(a[0])))
			continue;
		merged[j] = 1;
		sib[nsib++] = r[j].node;
	}
	return nsib;
}

static void held(struct run_summary *s, const struct collection *c,
		 const struct watch_tracker *t, struct addrmap *named,
		 struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	struct ranked *r = xcalloc(g->nnodes + 1, sizeof(*r));
	size_t *w = xcalloc(g->nnodes + 1, sizeof(*w));
	size_t i, n, nsib, *sib;
	unsigned char *merged;

	n = rank_held(c, t, r, w);
	qsort(r, n, sizeof(*r), by_blocked);
	sib = xcalloc(n + 1, sizeof(*sib));
	merged = xcalloc(n + 1, 1);
	for (i = 0; i < n; i++) {
		if (merged[i])
			continue;
		nsib = siblings(g, r, n, i, merged, sib);
		held_cause(s, c, t, &r[i], sib, nsib, w, named, sb);
	}
	free(merged);
	free(sib);
	free(w);
	free(r);
}

void run_summarize_graph(struct run_summary *s, const struct collection *c,
			 const struct watch_tracker *t, struct addrmap *named)
{
	struct strbuf sb;

	strbuf_init(&sb);
	cycles(s, c, t, named, &sb);
	held(s, c, t, named, &sb);
	strbuf_release(&sb);
}
