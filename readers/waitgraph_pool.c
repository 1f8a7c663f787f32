/*
 * A ThreadPoolExecutor's queued jobs: who will run them.
 *
 * A job submitted to a concurrent.futures.ThreadPoolExecutor and not
 * yet taken is a _WorkItem in the pool's work queue; its future stays
 * pending until one of the pool's worker threads takes it.  A thread
 * waiting on such a future (Future.result(), wait()) waits for the
 * first of that pool's workers to be free.  When every worker waits in
 * turn, directly or not, for a job queued behind it (a job that submits
 * another to its own full pool and waits for its result: the classic
 * executor deadlock), nothing will ever run it, and the graph has the
 * cycle.  The queue's order is not read: any worker freed takes the
 * first job, and then the next.
 *
 * The workers are found by their frames: _worker(executor_reference,
 * [ctx,] work_queue) in concurrent/futures/thread.py, whose local
 * work_queue is the pool's queue, a queue.Queue on 3.6 (its items in
 * the deque `queue`), a queue.SimpleQueue from 3.7.
 *
 * Bounds: a pool's workers past WG_MAX_POOL_THREADS are not linked, and
 * its jobs' waits then count one choice more than their edges, so that
 * they never make a cycle (one of the workers left out may be free);
 * past WG_MAX_POOL_EDGES edges in all, the further queued jobs wait for
 * nothing, as before any was linked (each costs an edge per worker).
 */
#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "readers/dicts.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/primitives_internal.h"
#include "common/banned.h"

/* Pools looked at, workers of each linked, jobs of each queue read. */
#define WG_MAX_POOLS 64
#define WG_MAX_POOL_THREADS 4096
#define WG_MAX_QUEUED_JOBS 4096
#define WG_MAX_POOL_EDGES 65536

struct pool {
	uint64_t queue;
	size_t *workers;  /* thread nodes, the first WG_MAX_POOL_THREADS */
	size_t nworkers;
	size_t all;       /* workers found, linked or not */
};

/* The work queue of the executor whose worker thread t is, or 0. */
static uint64_t worker_queue(struct wg_build *b, const struct py_thread *t)
{
	size_t k;

	/* (its outermost Python frames: the thread's run()) */
	for (k = t->nframes; k > 0 && t->nframes - k < WG_MAX_FRAMES; k--) {
		const struct py_frame *f = &t->frames[k - 1];

		if (f->code->name && f->code->filename &&
		    !strcmp(f->code->name, "_worker") &&
		    cs_ends_with(f->code->filename,
				 "/concurrent/futures/thread.py"))
			return py_frame_local(b->py, f, "work_queue");
	}
	return 0;
}

/* The pools' queues and their workers, at most WG_MAX_POOLS. */
static size_t find_pools(struct wg_build *b, struct pool *pools)
{
	size_t i, k, n = 0;

	for (i = 0; i < b->snap->nthreads; i++) {
		uint64_t q = worker_queue(b, &b->snap->threads[i]);
		long node = py_waitgraph_node_of(b->g, WG_THREAD, i);

		if (!q || node < 0)
			continue;
		for (k = 0; k < n && pools[k].queue != q; k++)
			;
		if (k == n) {
			if (n == WG_MAX_POOLS)
				continue;
			pools[n].queue = q;
			pools[n].workers = xcalloc(WG_MAX_POOL_THREADS,
						   sizeof(size_t));
			pools[n].all = 0;
			pools[n++].nworkers = 0;
		}
		pools[k].all++;
		if (pools[k].nworkers < WG_MAX_POOL_THREADS)
			pools[k].workers[pools[k].nworkers++] = (size_t)node;
	}
	return n;
}

/* The items of work queue q (a SimpleQueue, or a queue.Queue's deque),
 * at most max: how many. */
static size_t queued(struct wg_build *b, uint64_t q, uint64_t *out,
		     size_t max)
{
	struct cs_err err;
	const char *name;
	uint64_t type, dq;
	size_t n;

	cs_err_init(&err);
	if (pyobj_read_type(b->py, q, &type, &err) < 0 ||
	    !(name = py_type_name_cached(b->py, type)))
		return 0;
	if (!strcmp(name, "_queue.SimpleQueue"))
		return pysimplequeue_items(b->py, q, out, max, &n, &err) < 0 ?
		       0 : n < max ? n : max;
	if (strcmp(name, "Queue") ||
	    pyobj_get_attr(b->py, q, "queue", &dq, &err) != 0)
		return 0;
	return prim_deque_items(b->py, &b->types, dq, out, max);
}

/* A pending future of a job in the pool's queue that something waits
 * on waits for the first of the pool's workers (*budget: the edges
 * still allowed). */
static void link_queued(struct wg_build *b, const struct pool *p,
			uint64_t *items, size_t *budget)
{
	struct py_waitgraph *g = b->g;
	size_t n = queued(b, p->queue, items, WG_MAX_QUEUED_JOBS), i, k;

	for (i = 0; i < n; i++) {
		struct cs_err err;
		uint64_t fut;
		uintptr_t v;
		int found;
		struct py_prim *pr;

		cs_err_init(&err);
		if (!items[i] ||
		    pyobj_get_attr(b->py, items[i], "future", &fut, &err) != 0)
			continue;  /* (None: a worker's signal to exit) */
		v = (uintptr_t)addrmap_get(&g->index, fut, &found);
		if (!found || !v)
			continue;  /* nothing waits on it */
		pr = &g->prims[g->nodes[v - 1].index];
		if (pr->kind != PY_PRIM_CFUTURE || !pr->fstate ||
		    strcmp(pr->fstate, "pending"))
			continue;
		if (*budget < p->nworkers)
			return;
		*budget -= p->nworkers;
		pr->queued = 1;
		/* (with workers left out, a choice more than its edges:
		 * p->all + 1, as one alone would wait plainly) */
		for (k = 0; k < p->nworkers; k++)
			wg_add_any_edge(b, v - 1, p->workers[k],
					p->all > p->nworkers ? p->all + 1 :
					p->nworkers);
	}
}

void wg_link_thread_pools(struct wg_build *b)
{
	struct pool *pools = xcalloc(WG_MAX_POOLS, sizeof(*pools));
	uint64_t *items;
	size_t n = find_pools(b, pools), i;

	size_t budget = WG_MAX_POOL_EDGES;

	items = n ? xcalloc(WG_MAX_QUEUED_JOBS, sizeof(*items)) : NULL;
	for (i = 0; i < n; i++) {
		link_queued(b, &pools[i], items, &budget);
		free(pools[i].workers);
	}
	free(items);
	free(pools);
}
