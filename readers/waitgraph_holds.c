/*
 * Which locks a thread, task or greenlet holds: those its frames' open
 * `with` blocks entered, the only trace of a holder CPython keeps for
 * most locks (readers/withblocks.h).  A lock taken inside a generator-
 * based context manager (@contextmanager, @asynccontextmanager: `async
 * with locked():` around a `async with lock: yield`) is held open by the
 * generator, suspended at its yield, which no unit's stack runs; the
 * unit's own block holds the manager, whose `gen` is that generator:
 * its open blocks are the unit's holds too, followed through managers
 * nested so up to WG_MAX_CM_DEPTH, and through WG_MAX_CM_GENS generators
 * in all per frame (a hostile heap could nest PY_MAX_WITH managers at
 * each level).  An ExitStack (or AsyncExitStack) in a `with` holds what
 * it entered until it closes, kept in its _exit_callbacks: those
 * managers are the unit's holds too, at the same bounds.  And the
 * holders a lock names itself (wg_link_owners()).
 */
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/withblocks.h"
#include "common/banned.h"

#define WG_MAX_CM_DEPTH 4
#define WG_MAX_CM_GENS 64
/* An ExitStack's callbacks read: its first WG_MAX_STACK_CALLBACKS, of
 * which PY_MAX_WITH that may hold a lock are kept. */
#define WG_MAX_STACK_CALLBACKS 256

/* A lock that names its owner (trio's, anyio's: a task; an RLock: a
 * thread) and names another than the unit's: a `with` of this unit
 * around it holds it no more (released inside the block, as
 * Condition.wait() does, or by a bare release(); an ExitStack handed
 * to another thread with pop_all()). */
static int owned_by_another(const struct py_prim *p,
			    const struct wg_unit_holds *u)
{
	if (p->owner_task)
		return !u->task || p->owner_task != u->task->addr;
	return u->ident && py_prim_thread_owned(p) && p->locked == 1 &&
	       p->owner && p->owner != u->ident;
}

/* A lock only one can hold that this very frame waits for again inside
 * its own `with`: released by hand first (`with lk: lk.release(); ...;
 * lk.acquire()`), it may be another unit's now, taken by a bare
 * acquire() no trace shows; or a self-deadlock.  No hold is said,
 * rather than a deadlock that may be none.  (A semaphore's `with` may
 * hold one slot while it waits for another.) */
static int retaken(const struct py_prim *p, uint64_t held,
		   const struct wg_unit_holds *u, int depth)
{
	return depth == 0 && u->waits_here && u->waited == held &&
	       p->kind != PY_PRIM_SEMAPHORE &&
	       p->kind != PY_PRIM_BOUNDED_SEMAPHORE;
}

/* The generator that context manager cm runs, when it is contextlib's
 * (its instance attribute `gen`) and one the heap walk read; else
 * NULL. */
static const struct py_gen *cm_generator(struct wg_build *b, uint64_t cm)
{
	uint64_t type, gen = 0;
	const char *name;
	struct cs_err err;
	uintptr_t k;

	if (!b->a || pyobj_read_type(b->py, cm, &type, NULL) != 0)
		return NULL;
	name = py_type_name_cached(b->py, type);
	if (!name || (strcmp(name, "_AsyncGeneratorContextManager") &&
		      strcmp(name, "_GeneratorContextManager")))
		return NULL;
	cs_err_init(&err);
	if (pyobj_get_attr(b->py, cm, "gen", &gen, &err) != 0 || !gen)
		return NULL;
	k = (uintptr_t)addrmap_get(&b->a->gen_index, gen, NULL);
	return k && k <= b->a->ngens ? &b->a->gens[k - 1] : NULL;
}

/* Generator gen is kept entered by a `with` of node's frame f (the
 * first such `with` found counts: one generator is entered once). */
static void note_entered(struct wg_build *b, size_t gen, size_t node,
			 const struct py_frame *f, int line)
{
	struct py_waitgraph *g = b->g;

	if (addrmap_get(&g->entered_index, (uint64_t)gen + 1, NULL))
		return;
	g->entered = xgrow(g->entered, &g->aentered, g->nentered + 1,
			   sizeof(*g->entered));
	g->entered[g->nentered].gen = gen;
	g->entered[g->nentered].node = node;
	g->entered[g->nentered].at = f;
	g->entered[g->nentered].line = line;
	g->nentered++;
	addrmap_put(&g->entered_index, (uint64_t)gen + 1,
		    (void *)(uintptr_t)g->nentered);
}

static int is_release_name(const char *name)
{
	return name && !strcmp(name, "release");
}

/* What callback cb of an ExitStack holds open: the manager whose exit
 * it is (enter_context(), enter_async_context(), push(); 3.6 and 3.7
 * wrap the exit in a function that keeps the manager in __self__), or
 * the lock whose release() callback() will call (`lock.acquire();
 * stack.callback(lock.release)`), kept in the wrapper's __wrapped__
 * (*by_release set: a callback proves no acquire); else 0. */
static uint64_t stack_callback_holds(struct pyproc *py, uint64_t cb,
				     int *by_release)
{
	uint64_t v = 0, type;
	struct cs_err err;
	const char *tn;

	*by_release = 0;
	if (py_exit_manager(py, cb, &v))
		return v;
	cs_err_init(&err);
	if (pyobj_read_type(py, cb, &type, &err) != 0 ||
	    !(tn = py_type_name_cached(py, type)) || strcmp(tn, "function"))
		return 0;
	if (pyobj_get_attr(py, cb, "__self__", &v, &err) == 0 && v)
		return v;
	*by_release = 1;
	if (pyobj_get_attr(py, cb, "__wrapped__", &v, &err) != 0 || !v ||
	    !py_bound_to(py, v, is_release_name, &v))
		return 0;
	return v;
}

/* Is obj contextlib's ExitStack or AsyncExitStack (or a subclass)? */
static int is_exit_stack(struct wg_build *b, uint64_t obj)
{
	const struct py_prim_types *t = &b->types;
	uint64_t type;

	return t->exit_stack && pyobj_read_type(b->py, obj, &type, NULL) == 0 &&
	       (type == t->exit_stack ||
		pytype_is_subtype(b->py, type, t->exit_stack));
}

/* May a stack's manager m hold a lock: a lock, a generator-based
 * manager, another stack?  (Files and the like are not kept: a stack
 * of many keeps its locks among the first PY_MAX_WITH kept.) */
static int may_hold(struct wg_build *b, uint64_t m)
{
	struct py_prim p;

	/* (aiohttp's connector: what holds it is a connection, not the
	 * connector's own `async with`) */
	if (wg_prim_read(b, m, &p))
		return py_prim_is_lock(&p) && p.family != PY_PRIM_AIOHTTP;
	return cm_generator(b, m) || is_exit_stack(b, m);
}

/* What ExitStack or AsyncExitStack `stack` holds open, into entered (the
 * managers it entered or was pushed) and released (the locks whose
 * release its callback() will call), PY_MAX_WITH of each at most: 1
 * when it is a stack, else 0. */
static int exit_stack_holds(struct wg_build *b, uint64_t stack,
			    struct py_with_blocks *entered,
			    struct py_with_blocks *released)
{
	const struct py_prim_types *t = &b->types;
	uint64_t type, dq, items[WG_MAX_STACK_CALLBACKS], pair[2], m;
	struct py_with_blocks *to;
	size_t size, i, k;
	struct cs_err err;
	int by_release;

	cs_err_init(&err);
	entered->nheld = released->nheld = 0;
	entered->nentering = released->nentering = 0;
	if (!t->deque || !is_exit_stack(b, stack) ||
	    pyobj_get_attr(b->py, stack, "_exit_callbacks", &dq, &err) != 0 ||
	    !dq || pyobj_read_type(b->py, dq, &type, &err) != 0 ||
	    type != t->deque ||
	    pydeque_items(b->py, dq, items, WG_MAX_STACK_CALLBACKS, &size,
			  &err) < 0)
		return 0;
	for (i = 0; i < size && i < WG_MAX_STACK_CALLBACKS; i++) {
		/* 3.7+: (is_sync, callback); 3.6: the callback */
		if (pyseq_items(b->py, items[i], pair, 2, &k, &err) == 0 &&
		    k == 2)
			items[i] = pair[1];
		m = stack_callback_holds(b->py, items[i], &by_release);
		to = by_release ? released : entered;
		/* (which line entered it the stack does not keep) */
		if (m && to->nheld < PY_MAX_WITH && may_hold(b, m)) {
			to->held_line[to->nheld] = 0;
			to->held[to->nheld++] = m;
		}
	}
	return 1;
}

void wg_add_hold(struct wg_build *b, size_t from, size_t to,
		 const struct py_frame *at, int took_line)
{
	size_t n = b->g->nedges;

	wg_add_edge(b, WG_HOLDS, from, to, at);
	if (b->g->nedges > n)
		b->g->edges[n].took_line = took_line;
}

/* by_release: wb's are locks whose release a stack's callback() will
 * call, which proves no acquire. */
static void add_holds_at(struct wg_build *b, size_t node,
			 const struct py_frame *f,
			 const struct py_with_blocks *wb,
			 const struct wg_unit_holds *u, int depth,
			 int by_release, size_t *budget)
{
	struct py_with_blocks inner, cbs;
	const struct py_gen *g;
	struct py_prim hp;
	struct cs_err err;
	size_t h, r;
	long obj;

	for (h = 0; h < wb->nheld; h++) {
		for (r = 0; r < u->nreleased && u->released[r] != wb->held[h];
		     r++)
			;
		/* (a stack's callback may be registered before the acquire
		 * the unit waits in: `st.callback(lk.release); lk.acquire()`) */
		if (r < u->nreleased ||
		    (by_release && u->waited == wb->held[h]))
			continue;
		/* (a node only for a lock: a Popen or an executor in a
		 * `with` is no hold; nor is a lock its state says is free:
		 * released inside the `with`, as a library's own Condition
		 * does while it waits) */
		if (wg_prim_read(b, wb->held[h], &hp)) {
			if (py_prim_is_lock(&hp) && hp.locked != 0 &&
			    !retaken(&hp, wb->held[h], u, depth) &&
			    hp.family != PY_PRIM_AIOHTTP &&
			    !owned_by_another(&hp, u) &&
			    (obj = wg_object_node(b, wb->held[h])) >= 0)
				wg_add_hold(b, node, (size_t)obj, f,
					    wb->held_line[h]);
			continue;
		}
		/* `async with session.get(...) as resp:` holds a
		 * connection of aiohttp's connector */
		if (wg_aiohttp_hold(b, node, wb->held[h], f,
				    wb->held_line[h]))
			continue;
		/* An ExitStack's managers stay entered until it closes:
		 * held as the frame's own blocks are. */
		if (depth < WG_MAX_CM_DEPTH && *budget &&
		    exit_stack_holds(b, wb->held[h], &inner, &cbs)) {
			(*budget)--;
			add_holds_at(b, node, f, &inner, u, depth + 1, 0,
				     budget);
			add_holds_at(b, node, f, &cbs, u, depth + 1, 1,
				     budget);
			continue;
		}
		/* A generator suspended inside the manager's block: its
		 * frame's blocks, its place the holding frame. */
		if (depth >= WG_MAX_CM_DEPTH || !*budget ||
		    !(g = cm_generator(b, wb->held[h])) || !g->has_frame ||
		    g->state != PY_GEN_SUSPENDED)
			continue;
		(*budget)--;
		note_entered(b, (size_t)(g - b->a->gens), node, f,
			     wb->held_line[h]);
		cs_err_init(&err);
		if (py_with_blocks_read(b->py, &g->frame, 0, &inner, &err) == 0)
			add_holds_at(b, node, &g->frame, &inner, u, depth + 1,
				     0, budget);
	}
}

void wg_add_holds(struct wg_build *b, size_t node, const struct py_frame *f,
		  const struct py_with_blocks *wb,
		  const struct wg_unit_holds *u)
{
	size_t budget = WG_MAX_CM_GENS;

	add_holds_at(b, node, f, wb, u, 0, 0, &budget);
}

void wg_link_condition_locks(struct wg_build *b)
{
	struct py_waitgraph *g = b->g;
	size_t i, n = g->nedges;
	uintptr_t lock;

	/* Bounded: the edges there were; those added are to locks. */
	for (i = 0; i < n; i++) {
		const struct wg_edge *e = &g->edges[i];
		const struct wg_node *to = &g->nodes[e->to];
		const struct py_prim *p;

		if (e->kind != WG_HOLDS || to->kind != WG_OBJECT)
			continue;
		p = &g->prims[to->index];
		if (p->kind != PY_PRIM_CONDITION ||
		    p->family != PY_PRIM_THREADING || !p->inner ||
		    !(lock = (uintptr_t)addrmap_get(&g->index, p->inner, NULL)))
			continue;
		wg_add_hold(b, e->from, lock - 1, e->at, e->took_line);
	}
}

/* The RLocks (by node + 1) an asyncio task holds in a `with`, each with the
 * kernel id of the thread that runs the task's loop (0: unknown), into
 * held: an RLock entered by a coroutine names that thread its owner.
 * Returns, per node, whether it waits for something (a waits-for edge
 * from it). */
static unsigned char *task_held_rlocks(const struct wg_build *b,
				       struct addrmap *held)
{
	const struct py_waitgraph *g = b->g;
	unsigned char *waits = xcalloc(g->nnodes + 1, 1);
	size_t i;

	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		const struct wg_node *from = &g->nodes[e->from];

		if (e->kind == WG_WAITS_FOR)
			waits[e->from] = 1;
		if (e->kind != WG_HOLDS || from->kind != WG_TASK || !b->a ||
		    from->index >= b->a->ntasks ||
		    g->nodes[e->to].kind != WG_OBJECT ||
		    !py_prim_thread_owned(&g->prims[g->nodes[e->to].index]))
			continue;
		addrmap_put(held, e->to + 1,  /* (no key 0) */
			    (void *)(uintptr_t)(b->a->tasks[from->index].tid));
	}
	return waits;
}

/* Holders a lock names itself: an RLock's owning thread, a trio.Lock's
 * owning task (which may hold it with no `with`: lock.acquire()).  An
 * RLock a task holds names the task's thread: that thread is no holder
 * of its own, lest the lock read as held by two, unless it waits for
 * something itself (blocked in a step of another task, say): then the
 * task cannot go on either, and the thread's hold keeps the cycle that
 * runs through it. */
void wg_link_owners(struct wg_build *b)
{
	struct py_waitgraph *g = b->g;
	size_t i, t, nn = g->nnodes, before;
	struct addrmap by_task;
	unsigned char *waits;

	addrmap_init(&by_task);
	waits = task_held_rlocks(b, &by_task);
	for (i = 0; i < nn; i++) {
		const struct py_prim *p;
		long node;

		if (g->nodes[i].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->owner_task) {
			const struct py_task *owner = b->a ?
				py_async_task(b->a, p->owner_task) : NULL;

			node = owner ? (long)(b->snap->nthreads +
					      (size_t)(owner - b->a->tasks)) :
				       -1;
			if (node >= 0 && (!p->owner_coro ||
					  owner->coro == p->owner_coro))
				wg_add_edge(b, WG_HOLDS, (size_t)node, i, NULL);
			continue;
		}
		if (!py_prim_thread_owned(p) || !p->owner)
			continue;
		for (t = 0; t < b->snap->nthreads; t++) {
			int found;
			uintptr_t tid;

			if (b->snap->threads[t].thread_id != p->owner)
				continue;
			node = py_waitgraph_node_of(g, WG_THREAD, t);
			tid = (uintptr_t)addrmap_get(&by_task, i + 1, &found);
			if (found && tid && tid == (uintptr_t)
					b->snap->threads[t].tid &&
			    !(node >= 0 && waits[node]))
				continue;
			if (node < 0)
				continue;
			before = g->nedges;
			wg_add_edge(b, WG_HOLDS, (size_t)node, i, NULL);
			/* (a new edge: no `with` of the thread's took it) */
			if (g->nedges > before && p->kind == PY_PRIM_RLOCK)
				g->edges[before].by_ident = 1;
		}
	}
	addrmap_release(&by_task);
	free(waits);
}
