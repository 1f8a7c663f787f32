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
 * each level).
 */
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "readers/dicts.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/withblocks.h"
#include "common/banned.h"

#define WG_MAX_CM_DEPTH 4
#define WG_MAX_CM_GENS 64

/* A lock that names its owner (trio's, anyio's: a task) and names
 * another than unit_task (NULL: a thread or greenlet): a `with` of this
 * unit around it holds it no more (released inside the block, as
 * Condition.wait() does, or by a bare release()). */
static int owned_by_another(const struct py_prim *p,
			    const struct py_task *unit_task)
{
	return p->owner_task && (!unit_task || p->owner_task != unit_task->addr);
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

static void add_holds_at(struct wg_build *b, size_t node,
			 const struct py_frame *f,
			 const struct py_with_blocks *wb,
			 const uint64_t *released, size_t nreleased,
			 const struct py_task *unit_task, int depth,
			 size_t *budget)
{
	struct py_with_blocks inner;
	const struct py_gen *g;
	struct py_prim hp;
	struct cs_err err;
	size_t h, r;
	long obj;

	for (h = 0; h < wb->nheld; h++) {
		for (r = 0; r < nreleased && released[r] != wb->held[h]; r++)
			;
		if (r < nreleased)
			continue;
		/* (a node only for a lock: a Popen or an executor in a
		 * `with` is no hold; nor is a lock its state says is free:
		 * released inside the `with`, as a library's own Condition
		 * does while it waits) */
		if (wg_prim_read(b, wb->held[h], &hp)) {
			if (py_prim_is_lock(&hp) && hp.locked != 0 &&
			    !owned_by_another(&hp, unit_task) &&
			    (obj = wg_object_node(b, wb->held[h])) >= 0)
				wg_add_edge(b, WG_HOLDS, node, (size_t)obj, f);
			continue;
		}
		/* A generator suspended inside the manager's block: its
		 * frame's blocks, its place the holding frame. */
		if (depth >= WG_MAX_CM_DEPTH || !*budget ||
		    !(g = cm_generator(b, wb->held[h])) || !g->has_frame ||
		    g->state != PY_GEN_SUSPENDED)
			continue;
		(*budget)--;
		cs_err_init(&err);
		if (py_with_blocks_read(b->py, &g->frame, 0, &inner, &err) == 0)
			add_holds_at(b, node, &g->frame, &inner, released,
				     nreleased, unit_task, depth + 1, budget);
	}
}

void wg_add_holds(struct wg_build *b, size_t node, const struct py_frame *f,
		  const struct py_with_blocks *wb, const uint64_t *released,
		  size_t nreleased, const struct py_task *unit_task)
{
	size_t budget = WG_MAX_CM_GENS;

	add_holds_at(b, node, f, wb, released, nreleased, unit_task, 0,
		     &budget);
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
		wg_add_edge(b, WG_HOLDS, e->from, lock - 1, e->at);
	}
}
