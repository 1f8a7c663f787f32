#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "attach/regs.h"
#include "attach/syscall_deadline.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/util.h"
#include "common/banned.h"

/* threading._active entries looked at for an exit's waits: so many read
 * at first, at most so many in all. */
#define WG_FEW_EXIT_THREADS 64
#define WG_MAX_EXIT_THREADS 65536
/* Workers of one multiprocessing pool linked; threads waiting on one of
 * its results told apart from them. */
#define WG_MAX_POOL_WORKERS 4096
#define WG_MAX_POOL_WAITERS 64
/* Futures of one concurrent.futures.wait() or as_completed() linked. */
#define WG_MAX_WAITED_FUTURES 4096

/* The job a worker thread runs, as a frame of its holds it: anyio's
 * WorkerThread.run (asyncio) its `future`, the asyncio future the task
 * awaits; trio's WorkerThread._handle_job its `fn`, the function
 * to_thread_run_sync() made (its local contextvars_aware_worker_fn).
 * 0 when f is neither.  (An idle anyio worker keeps its last job's
 * future, done: no task waits on that one.) */
static uint64_t worker_job(struct wg_build *b, const struct py_frame *f)
{
	const char *name = f->code->name, *file = f->code->filename;

	if (!strcmp(name, "run") &&
	    cs_ends_with(file, "/anyio/_backends/_asyncio.py"))
		return py_frame_local(b->py, f, "future");
	if (!strcmp(name, "_handle_job") &&
	    cs_ends_with(file, "/trio/_core/_thread_cache.py"))
		return py_frame_local(b->py, f, "fn");
	return 0;
}

/*
 * A worker thread of a ThreadPoolExecutor runs _WorkItem.run, whose
 * `self.future` is the concurrent.futures future: that future waits
 * for the thread.  A task awaiting run_in_executor, to_thread or
 * wrap_future reaches it through link_chained_sources().  anyio's and
 * trio's worker threads have their job noted (worker_job()) for the
 * tasks, linked later.
 */
static void link_executor(struct wg_build *b, size_t thread_node,
			  const struct py_thread *t)
{
	struct cs_err err;
	long obj;
	size_t k;

	for (k = 0; k < t->nframes && k < WG_MAX_FRAMES; k++) {
		const struct py_frame *f = &t->frames[k];
		uint64_t item, fut = 0;

		if (!f->code->name || !f->code->filename)
			continue;
		if ((fut = worker_job(b, f))) {
			addrmap_put(&b->worker_futures, fut,
				    (void *)(uintptr_t)(thread_node + 1));
			return;
		}
		/* trio.from_thread.run(): the thread waits on `q` for the
		 * system task trio runs the call in (linked with the
		 * tasks, link_trio_call()) */
		if (!strcmp(f->code->name, "_run_fn_as_system_task") &&
		    cs_ends_with(f->code->filename, "/trio/_threads.py")) {
			if ((item = py_frame_local(b->py, f, "q")) != 0)
				addrmap_put(&b->trio_calls, item,
					    (void *)(uintptr_t)(thread_node +
								1));
			continue;  /* (its worker's job is further out) */
		}
		if (strcmp(f->code->name, "run") ||
		    !cs_ends_with(f->code->filename,
				  "/concurrent/futures/thread.py"))
			continue;
		item = py_frame_local(b->py, f, "self");
		cs_err_init(&err);
		/* 3.14 runs it inside WorkerContext.run, also "run". */
		if (!item || pyobj_get_attr(b->py, item, "future", &fut, &err) != 0)
			continue;
		if ((obj = wg_object_node(b, fut)) >= 0)
			wg_add_edge(b, WG_WAITS_FOR, (size_t)obj, thread_node,
				    NULL);
		return;
	}
}

/* Is t in threading's _shutdown, where the interpreter waits at exit
 * for the threads that are not daemons (joining them up to 3.8, on
 * their state locks up to 3.12, in C since 3.13)? */
static int at_exit(const struct py_thread *t)
{
	size_t k;

	for (k = 0; k < t->nframes && k < WG_MAX_FRAMES; k++) {
		const struct py_code *c = t->frames[k].code;

		if (c->name && c->filename && !strcmp(c->name, "_shutdown") &&
		    cs_ends_with(c->filename, "/threading.py"))
			return 1;
	}
	return 0;
}

/* At exit, t waits for the Thread of every other thread in its
 * interpreter's threading._active that is no daemon. */
static void link_exit(struct wg_build *b, size_t thread_node,
		      const struct py_thread *t)
{
	struct pydict_entry *e;
	uint64_t mdict, active;
	size_t used = 0, n = WG_FEW_EXIT_THREADS, i;

	if (!at_exit(t) ||
	    pymodule_dict(b->py, t->interp, "threading", &mdict, NULL) != 0 ||
	    pydict_get_str(b->py, mdict, "_active", &active, NULL) != 0)
		return;
	/* One read of the dict for a few threads; a second, sized by the
	 * first's count, for more. */
	e = xcalloc(n, sizeof(*e));
	if (pydict_entries(b->py, active, e, n, &used, NULL) < 0)
		used = 0;
	if (used > n) {
		n = used < WG_MAX_EXIT_THREADS ? used : WG_MAX_EXIT_THREADS;
		free(e);
		e = xcalloc(n, sizeof(*e));
		/* (read live, with --no-block, it may have changed since) */
		if (pydict_entries(b->py, active, e, n, &used, NULL) < 0)
			used = 0;
	}
	for (i = 0; i < used && i < n; i++) {
		struct py_prim p;
		long obj;

		/* (entries past those the table holds stay 0) */
		if (!e[i].value || !wg_prim_read(b, e[i].value, &p) ||
		    p.kind != PY_PRIM_THREAD || p.daemon != 0 || !p.ident ||
		    p.ident == t->thread_id)
			continue;
		if ((obj = wg_object_node(b, e[i].value)) >= 0)
			wg_add_edge(b, WG_WAITS_FOR, thread_node, (size_t)obj,
				    NULL);
	}
	free(e);
}

/* The items of a set, frozenset, list or tuple, at most max; how many. */
size_t wg_collection_items(struct pyproc *py, uint64_t v, uint64_t *out,
			   size_t max)
{
	struct pydict_entry *e;
	struct cs_err err;
	size_t n = 0, i;
	uint64_t type;

	cs_err_init(&err);
	if (!v || pyobj_read_type(py, v, &type, &err) < 0)
		return 0;
	if (type == py->types.list || type == py->types.tuple)
		return pyseq_items(py, v, out, max, &n, &err) < 0 ? 0 :
		       n < max ? n : max;
	if (type != py->types.set && type != py->types.frozenset)
		return 0;
	e = xcalloc(max, sizeof(*e));
	if (pyset_entries(py, v, e, max, &n, &err) < 0)
		n = 0;
	for (i = 0; i < n && i < max; i++)
		out[i] = e[i].key;
	free(e);
	return i;
}

/* Is the concurrent future at addr pending or running (p filled)? */
static int future_pending(struct wg_build *b, uint64_t addr, struct py_prim *p)
{
	return addr && wg_prim_read(b, addr, p) &&
	       p->kind == PY_PRIM_CFUTURE && p->fstate &&
	       (!strcmp(p->fstate, "pending") || !strcmp(p->fstate, "running"));
}

/* Does wait() in frame f wait for all (ALL_COMPLETED, and
 * FIRST_EXCEPTION until one fails), not for the first done? */
static int waits_for_all(struct wg_build *b, const struct py_frame *f)
{
	const char *s = py_frame_local_str(b->py, f, "return_when");

	return s && (!strcmp(s, "ALL_COMPLETED") ||
		     !strcmp(s, "FIRST_EXCEPTION"));
}

int wg_futures_wait(struct wg_build *b, size_t node, const struct py_frame *f)
{
	const char *name = f->code->name;
	uint64_t *items;
	struct py_prim p;
	size_t n, i, npending = 0;
	int all;

	if (!name || !f->code->filename ||
	    (strcmp(name, "wait") && strcmp(name, "as_completed")) ||
	    !cs_ends_with(f->code->filename, "/concurrent/futures/_base.py"))
		return 0;
	/* The futures not done when it began waiting, a set in 3.6-3.14:
	 * wait()'s `not_done`, as_completed()'s `pending` (`fs` is the
	 * caller's argument before 3.9: a dict, a generator...). */
	items = xcalloc(WG_MAX_WAITED_FUTURES, sizeof(*items));
	all = !strcmp(name, "wait") && waits_for_all(b, f);
	n = wg_collection_items(b->py, py_frame_local(b->py, f,
			     !strcmp(name, "wait") ? "not_done" : "pending"),
			     items, WG_MAX_WAITED_FUTURES);
	for (i = 0; i < n; i++)
		if (future_pending(b, items[i], &p))
			items[npending++] = items[i];
	/* (FIRST_COMPLETED and as_completed() go on after the first: a
	 * wait for whichever) */
	for (i = 0; i < npending; i++) {
		long obj = wg_object_node(b, items[i]);

		if (obj < 0)
			continue;
		if (all)
			wg_add_edge(b, WG_WAITS_FOR, node, (size_t)obj, NULL);
		else
			wg_add_any_edge(b, node, (size_t)obj, npending);
	}
	free(items);
	return npending > 0;
}

void wg_link_thread(struct wg_build *b, size_t thread_node,
		    const struct py_thread *t)
{
	link_executor(b, thread_node, t);
	link_exit(b, thread_node, t);
}

/* Is the frame's local `name` True? */
static int local_true(struct wg_build *b, const struct py_frame *f,
		      const char *name)
{
	uint64_t v = py_frame_local(b->py, f, name);

	return v && v == b->py->types.true_;
}

int wg_thread_acquiring(struct wg_build *b, size_t node,
			const struct py_prim *p)
{
	const struct py_thread *t;
	const struct memsrc *ms = b->py->ms;
	size_t i;

	if (node >= b->snap->nthreads || p->locked == 0)
		return 0;
	t = &b->snap->threads[node];
	if (py_prim_thread_owned(p) && p->owner && p->owner == t->thread_id)
		return 0;
	/* Bounded by the threads the source lists.  (A timed acquire an
	 * earlier stop interrupted waits on in restart_syscall().) */
	for (i = 0; t->tid > 0 && i < ms->nthreads; i++)
		if (ms->threads[i].tid == t->tid)
			return cs_thread_in_futex(b->py->ms,
						  &ms->threads[i]) != 0;
	return 1;
}

int wg_frame_waits_on(struct wg_build *b, const struct py_prim *p,
		      const struct py_frame *f)
{
	static const char *const child_waits[] = {
		"wait", "_wait", "communicate", "_communicate", "__exit__",
		"join",
	};
	const char *name = f->code->name;
	size_t i;

	if (!name)
		return 0;
	if (p->kind == PY_PRIM_THREAD)
		/* is_alive() asks _wait_for_tstate_lock(False) (to 3.12) */
		return f->code->filename &&
		       cs_ends_with(f->code->filename, "/threading.py") &&
		       (!strcmp(name, "join") ||
			(!strcmp(name, "_wait_for_tstate_lock") &&
			 local_true(b, f, "block")));
	if (p->kind == PY_PRIM_IMPORT_LOCK)  /* (not release()) */
		return !strcmp(name, "acquire");
	/* aiohttp's connector: a request awaiting the future it queued
	 * for a free connection (in connect(), or from 3.10 in its
	 * _wait_for_available_connection()), not one making its own */
	if (p->family == PY_PRIM_AIOHTTP)
		return (!strcmp(name, "connect") ||
			!strcmp(name, "_wait_for_available_connection")) &&
		       py_frame_local(b->py, f, "fut") &&
		       !py_frame_local(b->py, f, "placeholder");
	if (p->kind == PY_PRIM_POOL_RESULT)
		/* (not _set(), which the pool's result thread calls) */
		return !strcmp(name, "get") || !strcmp(name, "wait") ||
		       !strcmp(name, "next") || !strcmp(name, "__next__");
	if (p->kind != PY_PRIM_PROCESS)
		return 1;
	for (i = 0; i < sizeof(child_waits) / sizeof(child_waits[0]); i++)
		if (!strcmp(name, child_waits[i]))
			return 1;
	return 0;
}

/* The idents of the threads waiting on node obj (edges from their
 * nodes), at most max: the edges are not indexed yet, so one scan of
 * them per result. */
static size_t waiting_idents(const struct wg_build *b, size_t obj,
			     uint64_t *out, size_t max)
{
	const struct py_waitgraph *g = b->g;
	size_t e, n = 0;

	for (e = 0; e < g->nedges && n < max; e++) {
		const struct wg_node *from = &g->nodes[g->edges[e].from];

		if (g->edges[e].kind == WG_WAITS_FOR && g->edges[e].to == obj &&
		    from->kind == WG_THREAD && from->index < b->snap->nthreads)
			out[n++] = b->snap->threads[from->index].thread_id;
	}
	return n;
}

static int has_ident(const uint64_t *ids, size_t n, uint64_t ident)
{
	size_t i;

	for (i = 0; ident && i < n; i++)
		if (ids[i] == ident)
			return 1;
	return 0;
}

/* The workers of pool result obj's pool where the result does not
 * know its pool (3.6, 3.7): the Pool that a thread waiting on it called
 * into (its `self` in multiprocessing/pool.py: Pool.map's). */
static uint64_t waiters_pool_workers(const struct wg_build *b, size_t obj)
{
	const struct py_waitgraph *g = b->g;
	size_t e, i;

	for (e = 0; e < g->nedges; e++) {
		const struct wg_node *from = &g->nodes[g->edges[e].from];
		const struct py_thread *t;

		if (g->edges[e].kind != WG_WAITS_FOR || g->edges[e].to != obj ||
		    from->kind != WG_THREAD || from->index >= b->snap->nthreads)
			continue;
		t = &b->snap->threads[from->index];
		for (i = 0; i < t->nframes; i++) {
			uint64_t self, workers;

			if (!t->frames[i].code ||
			    !cs_ends_with(t->frames[i].code->filename,
					  "/multiprocessing/pool.py"))
				continue;
			self = py_frame_local(b->py, &t->frames[i], "self");
			workers = self ? pyobj_lookup_or_0(b->py, self, "_pool")
				       : 0;
			if (workers)
				return workers;
		}
	}
	return 0;
}

void wg_link_pool_results(struct wg_build *b)
{
	struct py_waitgraph *g = b->g;
	size_t i, k, n, nn = g->nnodes;
	uint64_t *workers;

	workers = xcalloc(WG_MAX_POOL_WORKERS, sizeof(*workers));
	for (i = 0; i < nn; i++) {
		uint64_t pool, waiting[WG_MAX_POOL_WAITERS];
		size_t nwaiting;

		if (g->nodes[i].kind != WG_OBJECT ||
		    g->prims[g->nodes[i].index].kind != PY_PRIM_POOL_RESULT)
			continue;
		nwaiting = waiting_idents(b, i, waiting, WG_MAX_POOL_WAITERS);
		/* its pool (3.8+; None once done), whose _pool lists the
		 * workers: Processes, or a ThreadPool's DummyProcesses
		 * (Threads) */
		pool = pyobj_lookup_or_0(b->py, g->prims[g->nodes[i].index].addr,
					 "_pool");
		n = wg_collection_items(b->py, pool ? pyobj_lookup_or_0(
					     b->py, pool, "_pool") :
					     waiters_pool_workers(b, i),
				     workers, WG_MAX_POOL_WORKERS);
		for (k = 0; k < n; k++) {
			struct py_prim w;
			long obj;

			/* A worker waiting on a result of its own pool
			 * waits for another worker, not for itself: "any
			 * worker will do" is no wait for each. */
			if (!wg_prim_read(b, workers[k], &w) ||
			    (w.kind != PY_PRIM_PROCESS &&
			     w.kind != PY_PRIM_THREAD) ||
			    (w.kind == PY_PRIM_THREAD &&
			     has_ident(waiting, nwaiting, w.ident)))
				continue;
			if ((obj = wg_object_node(b, workers[k])) >= 0)
				wg_add_edge(b, WG_WAITS_FOR, i, (size_t)obj,
					    NULL);
		}
	}
	free(workers);
}

void wg_link_joined(struct wg_build *b)
{
	struct py_waitgraph *g = b->g;
	struct addrmap by_ident;      /* thread_id -> snap index + 1 */
	size_t i, t, nn = g->nnodes;
	int indexed = 0;

	addrmap_init(&by_ident);
	for (i = 0; i < nn; i++) {
		const struct py_prim *p;
		uintptr_t v;
		long node;

		if (g->nodes[i].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->kind != PY_PRIM_THREAD || !p->ident)
			continue;
		/* its ident is get_ident()'s: thread_id; the first thread
		 * state with it (a thread may have one per interpreter) */
		for (t = b->snap->nthreads; !indexed && t-- > 0;)
			if (b->snap->threads[t].thread_id)
				addrmap_put(&by_ident,
					    b->snap->threads[t].thread_id,
					    (void *)(uintptr_t)(t + 1));
		indexed = 1;
		v = (uintptr_t)addrmap_get(&by_ident, p->ident, NULL);
		node = v ? py_waitgraph_node_of(g, WG_THREAD, v - 1) : -1;
		if (node >= 0)
			wg_add_edge(b, WG_WAITS_FOR, i, (size_t)node, NULL);
	}
	addrmap_release(&by_ident);
}
