/*
 * What the wait-for graph reads off a future's done callbacks: which
 * they are, what their closures keep (asyncio's chained futures, a
 * tornado Runner or Event), and whose code they are.
 */
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/banned.h"

size_t wg_future_callbacks(struct pyproc *py, uint64_t c_future, uint64_t fut,
			   uint64_t *out, size_t max)
{
	const struct py_layout *L = &py->layout;
	uint64_t list = 0, type, first, items[WG_MAX_CALLBACKS];
	struct cs_err err;
	size_t n = 0, k = 0, i, one;

	cs_err_init(&err);
	if (pyobj_read_type(py, fut, &type, &err) < 0)
		return 0;
	if (c_future && L->fut_callbacks >= 0 &&
	    (type == c_future ||
	     pytype_is_subtype(py, type, c_future))) {
		if (L->fut_callback0 >= 0 &&
		    py_field_u64(py, fut, L->fut_callback0, &first, &err) > 0 &&
		    first && k < max)
			out[k++] = first;
		if (py_field_u64(py, fut, L->fut_callbacks, &list, &err) <= 0)
			list = 0;
	} else if (pyobj_get_attr(py, fut, "_done_callbacks", &list, &err) != 0 &&
		   (cs_err_init(&err),
		    pyobj_get_attr(py, fut, "_callbacks", &list, &err) != 0)) {
		list = 0;
	}
	if (!list || list == py->types.none ||
	    pyseq_items(py, list, items, WG_MAX_CALLBACKS, &n, &err) < 0)
		return k;
	for (i = 0; i < n && i < WG_MAX_CALLBACKS && k < max; i++) {
		if (pyobj_read_type(py, items[i], &type, &err) == 0 &&
		    type == py->types.tuple &&
		    pyseq_items(py, items[i], &first, 1, &one, &err) == 0 &&
		    one >= 1)
			out[k++] = first;
		else
			out[k++] = items[i];
	}
	return k;
}

size_t wg_closure_values(struct pyproc *py, uint64_t cb, const char *name,
			 uint64_t *out, size_t max)
{
	const struct py_layout *L = &py->layout;
	const struct py_code *code = py_function_code(py, cb);
	uint64_t closure = 0, cells[WG_MAX_CALLBACKS];
	struct cs_err err;
	size_t m = 0, k, n = 0;

	if (!code || (name && (!code->name || strcmp(code->name, name))))
		return 0;
	cs_err_init(&err);
	if (L->func_closure < 0 ||
	    py_field_u64(py, cb, L->func_closure, &closure, &err) <= 0 ||
	    !closure || closure == py->types.none ||
	    pyseq_items(py, closure, cells, WG_MAX_CALLBACKS, &m, &err) < 0)
		return 0;
	for (k = 0; k < m && k < WG_MAX_CALLBACKS && n < max; k++)
		if (py_field_u64(py, cells[k], L->cell_ref, &out[n], &err) > 0 &&
		    out[n])
			n++;
	return n;
}


int wg_tornado_locks_code(struct pyproc *py, uint64_t cb)
{
	const struct py_code *code = py_function_code(py, cb);

	return code && code->filename &&
	       cs_ends_with(code->filename, "/tornado/locks.py");
}

static int has(const struct addrmap *m, uint64_t key)
{
	int found;

	addrmap_get(m, key, &found);
	return found;
}

/* Lock._block -> the Lock, for all of a's tornado Locks (once). */
static void index_lock_blocks(struct pyproc *py, const struct py_async *a,
			      struct addrmap *out)
{
	size_t i;

	for (i = 0; i < a->nwaitables; i++) {
		uint64_t block;

		if (a->waitables[i].kind != PY_PRIM_LOCK)
			continue;
		block = pyobj_lookup_or_0(py, a->waitables[i].addr, "_block");
		if (block && !has(out, block))
			addrmap_put(out, block,
				    (void *)(uintptr_t)a->waitables[i].addr);
	}
}

struct placing {
	struct pyproc *py;
	const struct py_prim_types *t;
	const struct py_async *a;
	const struct addrmap *wanted;
	struct addrmap *out;
	uint64_t *futs;
	struct addrmap lock_of;   /* a Lock's _block -> the Lock */
	int locks_indexed;
	size_t placed;
};

/* Object w's futures that are wanted into out: -> w, or -> the Lock
 * whose inner semaphore w is. */
static void place_futures(struct placing *pl, const struct py_waitable *w)
{
	struct py_prim p;
	uint64_t owner = w->addr;
	size_t k, n;

	/* what the deques need of it, no state read */
	memset(&p, 0, sizeof(p));
	p.addr = w->addr;
	p.kind = (enum py_prim_kind)w->kind;
	p.family = PY_PRIM_TORNADO;
	n = py_prim_waiter_futures(pl->py, pl->t, &p, pl->futs,
				   WG_MAX_DEQUE_FUTURES);
	for (k = 0; k < n; k++) {
		uint64_t f = pl->futs[k];

		if (!f || !has(pl->wanted, f) || has(pl->out, f))
			continue;
		if (w->kind == PY_PRIM_BOUNDED_SEMAPHORE && owner == w->addr) {
			if (!pl->locks_indexed++)
				index_lock_blocks(pl->py, pl->a, &pl->lock_of);
			if (has(&pl->lock_of, w->addr))
				owner = (uintptr_t)addrmap_get(&pl->lock_of,
							       w->addr, NULL);
		}
		addrmap_put(pl->out, f, (void *)(uintptr_t)owner);
		pl->placed++;
	}
}

void wg_deque_waits(struct pyproc *py, const struct py_prim_types *t,
		    const struct py_async *a, const struct addrmap *wanted,
		    size_t nwanted, struct addrmap *out)
{
	/* The rarer kinds first, so that a wait is found before the many
	 * Locks a server may keep are looked at; a Lock's waiters are in
	 * its inner BoundedSemaphore, found with the others of that kind
	 * and then given to their Lock. */
	static const int order[] = {
		PY_PRIM_QUEUE, PY_PRIM_CONDITION, PY_PRIM_SEMAPHORE,
		PY_PRIM_BOUNDED_SEMAPHORE,
	};
	struct placing pl;
	size_t i, k;

	if (!nwanted || !a->nwaitables)
		return;
	memset(&pl, 0, sizeof(pl));
	pl.py = py;
	pl.t = t;
	pl.a = a;
	pl.wanted = wanted;
	pl.out = out;
	pl.futs = xcalloc(WG_MAX_DEQUE_FUTURES, sizeof(*pl.futs));
	addrmap_init(&pl.lock_of);
	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (i = 0; i < a->nwaitables && pl.placed < nwanted; i++)
			if (a->waitables[i].kind == order[k])
				place_futures(&pl, &a->waitables[i]);
	addrmap_release(&pl.lock_of);
	free(pl.futs);
}
