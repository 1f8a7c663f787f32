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

void wg_deque_waits(struct pyproc *py, const struct py_prim_types *t,
		    struct py_prim_memo *memo, const struct py_async *a,
		    struct addrmap *out)
{
	uint64_t *futs = xcalloc(WG_MAX_DEQUE_FUTURES, sizeof(*futs));
	size_t i, k, n;
	int locks;

	/* Locks first: their futures are also in their inner semaphore's
	 * deque, and a future already placed stays. */
	for (locks = 1; locks >= 0; locks--) {
		for (i = 0; i < a->nwaitables; i++) {
			struct py_prim p;

			if (!py_prim_read_memo(py, t, memo, a->waitables[i], &p) ||
			    (p.kind == PY_PRIM_LOCK) != locks)
				continue;
			n = py_prim_waiter_futures(py, t, &p, futs,
						   WG_MAX_DEQUE_FUTURES);
			for (k = 0; k < n; k++)
				if (futs[k] && !addrmap_get(out, futs[k], NULL))
					addrmap_put(out, futs[k],
						    (void *)(uintptr_t)p.addr);
		}
	}
	free(futs);
}
