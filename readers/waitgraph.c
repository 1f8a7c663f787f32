#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "readers/usercode.h"
#include "readers/withblocks.h"
#include "common/util.h"
#include "common/banned.h"

#define WG_MAX_FUTURE_NODES 100000  /* nodes looked at for chains */
#define WG_MAX_GATHER 4096          /* children of a gather linked */

#define VIA_MANY ((void *)UINTPTR_MAX)

/*
 * An edge as one non-zero map key, or 0 for node indexes too large to
 * pack (2^30 nodes and more: then the edges are searched one by one).
 * Thousands of tasks gathered by one parent add an edge each, and each
 * is looked up when added and again by waits_through_future(): a scan of
 * every edge each time made the graph quadratic in the tasks (1.1 s for
 * 32,000 gathered tasks, minutes for 200,000).
 */
static uint64_t edge_key(enum wg_edge_kind kind, size_t from, size_t to)
{
	const uint64_t lim = (uint64_t)1 << 30;

	if ((uint64_t)from >= lim || (uint64_t)to >= lim)
		return 0;
	return 1 + (((uint64_t)kind << 60) | ((uint64_t)from << 30) |
		    (uint64_t)to);
}

static int has_edge(const struct wg_build *b, enum wg_edge_kind kind,
		    size_t from, size_t to)
{
	const struct py_waitgraph *g = b->g;
	uint64_t key = edge_key(kind, from, to);
	size_t i;
	int found = 0;

	if (key) {
		addrmap_get(&b->edge_set, key, &found);
		return found;
	}
	for (i = 0; i < g->nedges; i++)
		if (g->edges[i].kind == kind && g->edges[i].from == from &&
		    g->edges[i].to == to)
			return 1;
	return 0;
}

static int is_future_node(const struct py_waitgraph *g, size_t node)
{
	return g->nodes[node].kind == WG_OBJECT &&
	       py_prim_is_future(&g->prims[g->nodes[node].index]);
}

void wg_add_edge(struct wg_build *b, enum wg_edge_kind kind, size_t from,
		 size_t to, const struct py_frame *at)
{
	struct py_waitgraph *g = b->g;
	uint64_t key = edge_key(kind, from, to);

	if (key ? !addrmap_add(&b->edge_set, key) :
		  has_edge(b, kind, from, to))
		return;
	g->edges = xgrow(g->edges, &g->aedges, g->nedges + 1,
			 sizeof(*g->edges));
	/* (every field this does not set is 0: one added later too) */
	memset(&g->edges[g->nedges], 0, sizeof(*g->edges));
	g->edges[g->nedges].kind = kind;
	g->edges[g->nedges].from = from;
	g->edges[g->nedges].to = to;
	g->edges[g->nedges].at = at;
	g->nedges++;
	if (kind == WG_WAITS_FOR && is_future_node(g, to)) {
		int found;
		void *v = addrmap_get(&b->via_future, from + 1, &found);

		addrmap_put(&b->via_future, from + 1,
			    found && v != (void *)(uintptr_t)(to + 1) ?
			    VIA_MANY : (void *)(uintptr_t)(to + 1));
	}
}

/* wg_edge.any of an edge whose choices wg_settle_any() counts */
#define ANY_UNCOUNTED UINT_MAX  /* (waitgraph_any.c counts them) */

void wg_add_any_edge(struct wg_build *b, size_t from, size_t to,
		     size_t choices)
{
	size_t n = b->g->nedges;

	wg_add_edge(b, WG_WAITS_FOR, from, to, NULL);
	if (b->g->nedges > n && choices != 1)  /* (one choice: a plain wait) */
		b->g->edges[n].any = !choices ? ANY_UNCOUNTED :
				     choices < UINT_MAX ? (unsigned)choices :
				     UINT_MAX - 1;
}

int wg_prim_read(struct wg_build *b, uint64_t obj, struct py_prim *p)
{
	return py_prim_read_memo(b->py, &b->types, &b->prims, obj, p);
}

/* The node of primitive obj (added on first sight), or -1 if obj is
 * not one. */
long wg_object_node(struct wg_build *b, uint64_t obj)
{
	struct py_waitgraph *g = b->g;
	struct py_prim p;
	int found;
	uintptr_t v = (uintptr_t)addrmap_get(&g->index, obj, &found);

	if (found)
		return (long)v - 1;
	if (!wg_prim_read(b, obj, &p))
		return -1;
	g->prims = xgrow(g->prims, &g->aprims, g->nprims + 1,
			 sizeof(*g->prims));
	g->prims[g->nprims] = p;
	v = py_waitgraph_add_node(g, WG_OBJECT, g->nprims++);
	addrmap_put(&g->index, obj, (void *)(v + 1));
	return (long)v;
}

/* What the graph asks of a frame's code, judged once per code object
 * (its file and names never change): ten thousand tasks suspended in
 * the same coroutines cost one look at their strings, not 10^4. */
enum {
	CODE_JUDGED = 1,     /* so that no entry is 0 (NULL: not seen) */
	CODE_PRIM_LIB = 2,   /* wg_is_prim_lib() */
	CODE_USER = 4,       /* py_is_user_file() */
	CODE_IDLE = 8,       /* wg_idle_frame() */
	/* asyncio's Python Future's __await__(), a generator of its own
	 * under the coroutine that awaits it (nest_asyncio puts that Future
	 * in place of the C one): no primitive, but a wait's first frame */
	CODE_FUTURE_AWAIT = 16,
};

static unsigned code_class(struct wg_build *b, const struct py_frame *f)
{
	uintptr_t v;

	if (f->code->addr == b->last_code && b->last_code)
		return b->last_class;
	v = (uintptr_t)addrmap_get(&b->code_class, f->code->addr, NULL);
	if (!v) {
		v = CODE_JUDGED;
		if (wg_is_prim_lib(f->code->filename))
			v |= CODE_PRIM_LIB;
		if (py_is_user_file(f->code->filename, b->stdlib))
			v |= CODE_USER;
		if (wg_idle_frame(f))
			v |= CODE_IDLE;
		if (py_code_is(f->code, "/asyncio/futures.py", "__await__"))
			v |= CODE_FUTURE_AWAIT;
		addrmap_put(&b->code_class, f->code->addr, (void *)v);
	}
	b->last_code = f->code->addr;
	b->last_class = (unsigned)v;
	return (unsigned)v;
}

/* Does thread node `node` wait in frame f's acquire() of obj?  A
 * library's own acquire() calls (a Condition's waiter, the exit's join
 * of a thread) are its primitive's business, said by the library frame
 * rules; a greenlet's waits, by gevent's objects. */
static int acquiring(struct wg_build *b, size_t node,
		     const struct py_frame *f, unsigned how, uint64_t obj)
{
	struct py_prim p;

	/* (no node for an object it is found not to wait for) */
	return (how & WG_SCAN_THREAD) && !(code_class(b, f) & CODE_PRIM_LIB) &&
	       wg_prim_read(b, obj, &p) && wg_thread_acquiring(b, node, &p) &&
	       wg_object_node(b, obj) >= 0;
}

/* Where unit nd is: its innermost frame, the one to blame (the
 * program's own), and whether it rests idle. */
static void note_places(struct wg_build *b, struct wg_node *nd,
			const struct py_frame *const *f, size_t n)
{
	size_t k;

	nd->inner = wg_unit_inner(f, n);
	for (k = 0; k < n && !nd->blame; k++)
		if (code_class(b, f[k]) & CODE_USER)
			nd->blame = f[k];
	if (!nd->blame)
		nd->blame = py_inline_program_frame(f, n);
	for (k = 0; k < n && !nd->idle; k++)
		nd->idle = (code_class(b, f[k]) & CODE_IDLE) &&
			   wg_idle_inside(f, k);
}

/* Condition.wait gives the lock up until it is notified: the `with
 * cond:` around it does not hold it now, nor a stack's callback of its
 * lock's release (`st.callback(cond.release)` is the lock's).  Those
 * of frame f waiting on p (self) into released[*n...]. */
static void note_released(const struct py_prim *p, const struct py_frame *f,
			  uint64_t self, uint64_t *released, size_t *n)
{
	if (p->kind == PY_PRIM_CONDITION && *n + 1 < PY_MAX_WITH &&
	    f->code->name && !strcmp(f->code->name, "wait")) {
		released[(*n)++] = self;
		if (p->inner)
			released[(*n)++] = p->inner;
	}
}

/* Everything the graph learns from one thread or task's frames. */
void wg_scan_unit(struct wg_build *b, size_t node,
		  const struct py_frame *const *f, size_t n, unsigned how,
		  const struct py_task *unit_task)
{
	struct py_waitgraph *g = b->g;
	int thread = (how & WG_SCAN_THREAD) != 0;
	uint64_t waited = 0, released[PY_MAX_WITH];
	struct wg_unit_holds u;
	size_t k, h, nreleased = 0, waits_in;
	long obj;

	if (n > WG_MAX_FRAMES)
		n = WG_MAX_FRAMES;
	/* The outermost primitive of the library frames at the top of the
	 * stack: a Queue.get that waits in Condition.wait waits for the
	 * Queue. */
	for (k = 0; k < n && (code_class(b, f[k]) &
			      (CODE_PRIM_LIB | CODE_FUTURE_AWAIT)); k++) {
		uint64_t self;
		struct py_prim p;

		if (!(code_class(b, f[k]) & CODE_PRIM_LIB))
			continue;

		if (thread && wg_futures_wait(b, node, f[k])) {
			waited = 0;
			break;
		}
		self = py_frame_local(b->py, f[k], "self");
		if (!self || !wg_prim_read(b, self, &p) ||
		    !wg_frame_waits_on(b, &p, f[k]))
			continue;
		/* A thread in the wait() of an Event that is set was woken:
		 * it only takes its locks (or the GIL) back to return. */
		if (thread && p.kind == PY_PRIM_EVENT && p.set == 1) {
			waited = 0;
			break;
		}
		waited = self;
		note_released(&p, f[k], self, released, &nreleased);
	}
	/* the frame that waits: the caller of the library's frames, or the
	 * innermost (an acquire() it calls, a `with` it enters) */
	waits_in = waited ? k : 0;
	memset(&u, 0, sizeof(u));
	u.released = released;
	u.task = unit_task;
	/* (under gevent's monkey-patching an RLock's owner is a
	 * greenlet's ident, not its thread's) */
	if (thread && node < b->snap->nthreads && !b->types.gevent_patched)
		u.ident = b->snap->threads[node].thread_id;
	for (k = 0; k < n; k++) {
		struct py_with_blocks wb;
		struct cs_err err;

		cs_err_init(&err);
		if (py_with_blocks_read(b->py, f[k],
					(how & WG_SCAN_MIDCALL) && k == 0, &wb,
					&err) < 0)
			continue;
		for (h = 0; !waited && k == 0 && h < wb.nentering; h++)
			if (wb.entering_by_call ?
			    acquiring(b, node, f[k], how, wb.entering[h]) :
			    wg_object_node(b, wb.entering[h]) >= 0)
				waited = wb.entering[h];
		u.nreleased = nreleased;
		u.waited = waited;
		u.waits_here = k == waits_in;
		wg_add_holds(b, node, f[k], &wb, &u);
	}
	/* A trio or anyio lock handed to a task names it its owner before
	 * the task runs again and leaves acquire(): it holds the lock
	 * (wg_link_owners()), and waits for it no more. */
	if (waited && (obj = wg_object_node(b, waited)) >= 0 &&
	    !(unit_task && g->prims[g->nodes[obj].index].owner_task ==
			   unit_task->addr))
		wg_add_edge(b, WG_WAITS_FOR, node, (size_t)obj, NULL);
	note_places(b, &g->nodes[node], f, n);
}

/* The task node of addr, or -1. */
static long task_node(struct wg_build *b, uint64_t addr)
{
	const struct py_task *t = b->a ? py_async_task(b->a, addr) : NULL;

	return t ? (long)(b->snap->nthreads + (size_t)(t - b->a->tasks)) : -1;
}

/*
 * What a future is and what its done callbacks say, read once per
 * future: thousands of tasks may wait on one future (a shutdown event,
 * a shared result, a gather), each adding its own callback, and reading
 * them again for every task would make the graph quadratic in the
 * tasks.  At most WG_MAX_CALLBACKS of each kind.
 */
struct fut_links {
	int gather;    /* an asyncio gather (its children are linked instead) */
	size_t nsources, nrunners, nevents;
	/* From _call_check_cancel's closure: what completes the future. */
	uint64_t sources[WG_MAX_CALLBACKS];
	/* From a `lambda _: runner` closure: tornado's Runner. */
	uint64_t runners[WG_MAX_CALLBACKS];
	/* From a lambda of tornado/locks.py: Event.wait()'s
	 * `lambda fut: self._waiters.remove(fut)`, self the Event. */
	uint64_t events[WG_MAX_CALLBACKS];
};

static const struct fut_links *fut_links_of(struct wg_build *b, uint64_t fut)
{
	struct fut_links *l = fut && fut == b->last_fut ? b->last_links :
			      addrmap_get(&b->fut_links, fut, NULL);
	uint64_t cbs[WG_MAX_CALLBACKS];
	struct py_prim p;
	size_t n, i;

	b->last_fut = fut;
	b->last_links = l;
	if (l)
		return l;
	l = b->last_links = xcalloc(1, sizeof(*l));
	addrmap_put(&b->fut_links, fut, l);
	if (wg_prim_read(b, fut, &p) &&
	    p.kind == PY_PRIM_GATHER) {
		l->gather = 1;
		return l;
	}
	n = wg_future_callbacks(b->py, b->types.c_future, fut, cbs,
				WG_MAX_CALLBACKS);
	for (i = 0; i < n; i++) {
		l->nsources += wg_closure_values(b->py, cbs[i], "_call_check_cancel",
					      l->sources + l->nsources,
					      WG_MAX_CALLBACKS - l->nsources);
		l->nrunners += wg_closure_values(b->py, cbs[i], "<lambda>",
					      l->runners + l->nrunners,
					      WG_MAX_CALLBACKS - l->nrunners);
		if (wg_tornado_locks_code(b->py, cbs[i]))
			l->nevents += wg_closure_values(b->py, cbs[i], "<lambda>",
						     l->events + l->nevents,
						     WG_MAX_CALLBACKS -
						     l->nevents);
	}
	return l;
}

static void fut_links_release(struct wg_build *b)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (addrmap_next(&b->fut_links, &pos, &key, &val))
		free(val);
	addrmap_release(&b->fut_links);
}

/*
 * asyncio's _chain_future(source, destination) -- behind
 * run_coroutine_threadsafe, wrap_future and run_in_executor -- gives
 * the destination a done callback _call_check_cancel whose closure
 * holds the source: the task or concurrent future that will complete
 * it.  Edges from `from` to each such source the graph knows (a task)
 * or can read (a concurrent future, added as a node).
 */
static void link_chained_sources(struct wg_build *b, size_t from, uint64_t fut)
{
	const struct fut_links *l = fut_links_of(b, fut);
	struct py_prim p;
	size_t k;
	long to;

	for (k = 0; k < l->nsources; k++) {
		uint64_t v = l->sources[k];

		to = task_node(b, v);
		if (to < 0 && wg_prim_read(b, v, &p) &&
		    p.kind == PY_PRIM_CFUTURE)
			to = wg_object_node(b, v);
		if (to >= 0 && (size_t)to != from)
			wg_add_edge(b, WG_WAITS_FOR, from, (size_t)to, NULL);
	}
}

/*
 * A task whose waiter is a gather waits for the gather, and the gather
 * for each of its children that is a pending task.
 */
static void link_gather(struct wg_build *b, size_t from, uint64_t fut)
{
	uint64_t list = 0, *items;
	struct cs_err err;
	size_t n = 0, i;
	long obj, to;

	if ((obj = wg_object_node(b, fut)) < 0)
		return;
	wg_add_edge(b, WG_WAITS_FOR, from, (size_t)obj, NULL);
	if (b->g->prims[b->g->nodes[obj].index].kind != PY_PRIM_GATHER)
		return;
	cs_err_init(&err);
	if (pyobj_get_attr(b->py, fut, "_children", &list, &err) != 0 ||
	    pyseq_items(b->py, list, NULL, 0, &n, &err) < 0 || !n)
		return;
	if (n > WG_MAX_GATHER)
		n = WG_MAX_GATHER;
	items = xcalloc(n, sizeof(*items));
	if (pyseq_items(b->py, list, items, n, &n, &err) == 0)
		for (i = 0; i < n && i < WG_MAX_GATHER; i++)
			if ((to = task_node(b, items[i])) >= 0)
				wg_add_edge(b, WG_WAITS_FOR, (size_t)obj,
					    (size_t)to, NULL);
	free(items);
}

/* Does from wait for to through a future node (a gather)? */
static int waits_through_future(const struct wg_build *b, size_t from,
				size_t to)
{
	const struct py_waitgraph *g = b->g;
	void *v = addrmap_get(&b->via_future, from + 1, NULL);
	size_t i;

	if (!v)
		return 0;
	if (v != VIA_MANY)
		return has_edge(b, WG_WAITS_FOR, (size_t)(uintptr_t)v - 1, to);
	/* Waiting for several futures at once: rare, searched. */
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];

		if (e->kind == WG_WAITS_FOR && e->from == from &&
		    is_future_node(g, e->to) &&
		    has_edge(b, WG_WAITS_FOR, e->to, to))
			return 1;
	}
	return 0;
}

#define WG_MAX_DRIVE_HOPS 32

/*
 * tornado's gen.coroutine runs a plain generator with a Runner and
 * keeps the Runner alive through a done callback of its result future,
 * `lambda _: runner`.  A task awaiting that future is driving the
 * generator; the generator's yielded future (Runner.future) may be the
 * result future of a nested coroutine's Runner, and so on.  The last
 * one's yielded future is what the task waits on (a tornado Lock's
 * acquire(), an Event's wait()): drive_ends keeps it.
 */
static void link_drives(struct wg_build *b, size_t task)
{
	struct py_waitgraph *g = b->g;
	uint64_t fut = b->a->tasks[task].waiter;
	size_t hop, k, ndrives = g->ndrives;

	for (hop = 0; fut && hop < WG_MAX_DRIVE_HOPS; hop++) {
		const struct fut_links *l = fut_links_of(b, fut);
		uint64_t next = 0;

		for (k = 0; k < l->nrunners && !next; k++) {
			uint64_t runner = l->runners[k];
			uint64_t gen = pyobj_lookup_or_0(b->py, runner, "gen");
			uintptr_t idx;

			if (!gen || pyobj_lookup_or_0(b->py, runner,
						      "result_future") != fut)
				continue;
			idx = (uintptr_t)addrmap_get(&b->a->gen_index, gen, NULL);
			if (!idx)
				continue;
			g->drives = xgrow(g->drives, &g->adrives, g->ndrives + 1,
					  sizeof(*g->drives));
			g->drives[g->ndrives].task = task;
			g->drives[g->ndrives].gen = idx - 1;
			g->drives[g->ndrives].by = "tornado";
			g->ndrives++;
			next = pyobj_lookup_or_0(b->py, runner, "future");
		}
		if (!next)
			break;
		fut = next == b->py->types.none ? 0 : next;
	}
	if (g->ndrives > ndrives && fut)
		addrmap_put(&b->drive_ends, (uint64_t)task + 1,
			    (void *)(uintptr_t)fut);
}

/* The future task waits on: the one its driven generators yielded last
 * (drive_ends), else its own waiter. */
static uint64_t task_waits_on(struct wg_build *b, size_t task)
{
	uintptr_t end = (uintptr_t)addrmap_get(&b->drive_ends,
					       (uint64_t)task + 1, NULL);

	return end ? end : b->a->tasks[task].waiter;
}

/*
 * tornado's Event.wait() is no coroutine: it returns a future, and the
 * task awaits that from its own frame.  The future's done callback,
 * `lambda fut: self._waiters.remove(fut)` of tornado/locks.py, keeps
 * the Event in its closure: a task awaiting the future waits on that
 * Event (a lambda of anyone else's that keeps an Event says nothing).
 */
static void link_callback_event(struct wg_build *b, size_t from, uint64_t fut)
{
	const struct fut_links *l = fut_links_of(b, fut);
	struct py_prim p;
	long obj;
	size_t k;

	for (k = 0; k < l->nevents; k++)
		if (wg_prim_read(b, l->events[k], &p) &&
		    p.family == PY_PRIM_TORNADO && p.kind == PY_PRIM_EVENT &&
		    (obj = wg_object_node(b, l->events[k])) >= 0) {
			wg_add_edge(b, WG_WAITS_FOR, from, (size_t)obj, NULL);
			return;
		}
}

/* Links from the futures tasks and threads wait on: gathers, chained
 * futures and concurrent futures (see link_chained_sources()). */
/*
 * Last, for the tasks nothing else linked: a future of tornado's, from
 * acquire(), wait(), get() or put(), is kept in the deque of waiters of
 * the object the task waits on (wg_deque_waits(), which reads tornado's
 * objects only for these futures).
 */
static void link_deque_waiters(struct wg_build *b, size_t base)
{
	struct py_waitgraph *g = b->g;
	unsigned char *linked;
	struct addrmap wanted, kept;
	size_t i, n = 0;
	long obj;

	if (!b->a || !b->a->nwaitables)
		return;
	linked = xcalloc(g->nnodes + 1, 1);
	for (i = 0; i < g->nedges; i++)
		if (g->edges[i].kind == WG_WAITS_FOR && g->edges[i].from < g->nnodes)
			linked[g->edges[i].from] = 1;
	addrmap_init(&wanted);
	addrmap_init(&kept);
	for (i = 0; i < b->a->ntasks; i++) {
		uint64_t w = task_waits_on(b, i);

		if (w && !linked[base + i] && !py_async_task(b->a, w))
			n += addrmap_add(&wanted, w);
	}
	wg_deque_waits(b->py, &b->types, b->a, &wanted, n, &kept);
	for (i = 0; n && i < b->a->ntasks; i++) {
		uint64_t w = task_waits_on(b, i);
		uintptr_t at = w && !linked[base + i] ?
			(uintptr_t)addrmap_get(&kept, w, NULL) : 0;

		if (at && (obj = wg_object_node(b, at)) >= 0)
			wg_add_edge(b, WG_WAITS_FOR, base + i, (size_t)obj, NULL);
	}
	addrmap_release(&kept);
	addrmap_release(&wanted);
	free(linked);
}

static void link_futures(struct wg_build *b, size_t base)
{
	struct py_waitgraph *g = b->g;
	size_t i;

	for (i = 0; b->a && i < b->a->ntasks; i++) {
		uint64_t w = b->a->tasks[i].waiter;
		uintptr_t worker;

		if (!w || py_async_task(b->a, w))
			continue;
		worker = (uintptr_t)addrmap_get(&b->worker_futures, w, NULL);
		if (worker) {
			wg_add_edge(b, WG_WAITS_FOR, base + i, worker - 1, NULL);
			continue;
		}
		/* Many tasks may wait on one future: what it is, is read
		 * once (fut_links_of()). */
		if (fut_links_of(b, w)->gather) {
			link_gather(b, base + i, w);
		} else {
			link_chained_sources(b, base + i, w);
			link_drives(b, i);
			link_callback_event(b, base + i, task_waits_on(b, i));
		}
	}
	/* Concurrent futures found so far (more may be added on the way:
	 * a chain of them is followed). */
	for (i = 0; i < g->nnodes && i < WG_MAX_FUTURE_NODES; i++)
		if (g->nodes[i].kind == WG_OBJECT &&
		    g->prims[g->nodes[i].index].kind == PY_PRIM_CFUTURE)
			link_chained_sources(b, i,
					     g->prims[g->nodes[i].index].addr);
	/* those no task is behind yet: their loop's thread */
	wg_link_threadsafe(b);
}

/* A suspended task's frames: what wg_scan_unit() finds, trio's
 * to_thread worker, and the thread a from_thread call of it blocks. */
static void scan_task(struct wg_build *b, size_t node,
		      const struct py_frame **fr, size_t n)
{
	wg_scan_unit(b, node, fr, n, 0,
		     b->a ? &b->a->tasks[node - b->task_base] : NULL);
	wg_link_trio_threads(b, node, fr, n);
	wg_link_aiohttp(b, node, fr, n);
}

static void build_init(struct wg_build *b, struct pyproc *py,
		       const struct py_snapshot *snap, const struct py_async *a,
		       struct py_waitgraph *g)
{
	memset(b, 0, sizeof(*b));
	b->py = py;
	b->snap = snap;
	b->a = a;
	b->g = g;
	py_prim_types_load(py, &b->types);
	addrmap_init(&b->fut_links);
	addrmap_init(&b->edge_set);
	addrmap_init(&b->via_future);
	addrmap_init(&b->first_of_set);
	addrmap_init(&b->code_class);
	addrmap_init(&b->worker_futures);
	addrmap_init(&b->trio_calls);
	addrmap_init(&b->drive_ends);
	wg_find_stdlib(snap, b->stdlib, sizeof(b->stdlib));
}

/* What build_init() made, but the graph (fut_links has its own). */
static void build_release(struct wg_build *b)
{
	addrmap_release(&b->edge_set);
	addrmap_release(&b->via_future);
	addrmap_release(&b->first_of_set);
	addrmap_release(&b->code_class);
	addrmap_release(&b->worker_futures);
	addrmap_release(&b->trio_calls);
	addrmap_release(&b->drive_ends);
	py_prim_memo_release(&b->prims);
	py_prim_types_release(&b->types);
}

int py_waitgraph_build(struct pyproc *py, const struct py_snapshot *snap,
		       const struct py_async *a,
		       const struct py_greenlets *gl, struct py_waitgraph *g,
		       struct cs_err *err)
{
	struct wg_build b;
	const struct py_frame **fr;
	size_t i, j, k, base, *dstart, *dlist;

	build_init(&b, py, snap, a, g);
	b.gl = gl;
	fr = xcalloc(WG_MAX_FRAMES, sizeof(*fr));
	base = py_waitgraph_add_units(g, snap->nthreads, a ? a->ntasks : 0);
	b.task_base = base;
	for (i = 0; i < snap->nthreads; i++) {
		const struct py_thread *t = &snap->threads[i];

		for (k = 0; k < t->nframes && k < WG_MAX_FRAMES; k++)
			fr[k] = &t->frames[k];
		wg_scan_unit(&b, i, fr, k, WG_SCAN_THREAD | WG_SCAN_MIDCALL,
			     NULL);
		if (!g->test)
			g->test = wg_pytest_node(py, t);
		wg_link_thread(&b, i, t);
	}
	/* Before the awaited-by edges, which a gather then explains. */
	link_futures(&b, base);
	wg_drives_by_task(g, a ? a->ntasks : 0, &dstart, &dlist);
	for (i = 0; a && i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];
		size_t n = 0;

		/* The generators it drives (innermost first) are where it
		 * really waits. */
		for (k = dstart[i + 1]; k-- > dstart[i] && n < WG_MAX_FRAMES;) {
			const struct py_gen *gen =
				&a->gens[g->drives[dlist[k]].gen];

			if (gen->has_frame && gen->frame.code)
				fr[n++] = &gen->frame;
		}
		for (k = 0; k < t->nstack && n < WG_MAX_FRAMES; k++) {
			const struct py_gen *gen;

			if (t->stack[k] >= a->ngens)
				continue;
			gen = &a->gens[t->stack[k]];
			if (gen->has_frame && gen->frame.code)
				fr[n++] = &gen->frame;
		}
		/* A running task's frames are its thread's: they were seen. */
		if (!t->running)
			scan_task(&b, base + i, fr, n);
		for (j = 0; j < t->nawaited_by; j++) {
			const struct py_task *w = py_async_task(a, t->awaited_by[j]);
			size_t from = base + (size_t)(w ? w - a->tasks : 0);
			size_t choices;

			if (!w || waits_through_future(&b, from, base + i) ||
			    (t->nursery && !wg_in_nursery_exit(&b, w, t->nursery)))
				continue;
			if ((choices = wg_first_of(&b, w, t->addr)) != 0)
				wg_add_any_edge(&b, from, base + i,
						choices - 1);
			else
				wg_add_edge(&b, WG_WAITS_FOR, from, base + i,
					    NULL);
		}
	}
	free(fr);
	free(dstart);
	free(dlist);
	link_deque_waiters(&b, base);
	fut_links_release(&b);
	wg_add_greenlets(&b);
	wg_link_owners(&b);
	wg_link_condition_locks(&b);
	wg_link_greenlets(&b);
	wg_link_pool_results(&b);
	wg_link_thread_pools(&b);
	wg_link_joined(&b);
	build_release(&b);
	wg_finish(g);
	(void)err;
	return 0;
}
