/*
 * aiohttp's connector as a primitive: a semaphore of connections.  Its
 * `_limit` (0: none) and `_limit_per_host` bound how many it keeps in
 * `_acquired` (a set of protocols, a placeholder for one being made);
 * a request finding none free awaits a future it queues in `_waiters`
 * (a dict by host key of deques, or of dicts from 3.10).  What holds a
 * connection is a Connection whose `_protocol` is not yet None (released
 * sets it so), kept by the ClientResponse reading from it (until the
 * body is read or the response released), kept in turn by the context
 * manager of `async with session.get(...)`.
 */
#include "readers/primitives.h"
#include "readers/primitives_internal.h"

#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Host keys whose waiters are counted; past them the count is unknown. */
#define AIOHTTP_MAX_KEYS 256

static int64_t waiters(struct pyproc *py, const struct py_prim_types *t,
		       uint64_t dict)
{
	struct pydict_entry e[AIOHTTP_MAX_KEYS];
	struct cs_err err;
	size_t used = 0, i;
	int64_t n = 0, k;

	cs_err_init(&err);
	if (!dict || pydict_entries(py, dict, e, AIOHTTP_MAX_KEYS, &used,
				    &err) < 0 || used > AIOHTTP_MAX_KEYS)
		return -1;
	for (i = 0; i < used; i++) {
		k = prim_len(py, t, e[i].value);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

void prim_read_aiohttp_state(struct pyproc *py, const struct py_prim_types *t,
			     struct py_prim *p)
{
	p->in_use = prim_len_attr(py, t, p->addr, "_acquired");
	p->limit = prim_int_attr(py, p->addr, "_limit");
	p->limit_per_host = prim_int_attr(py, p->addr, "_limit_per_host");
	p->waiters = waiters(py, t, prim_attr(py, p->addr, "_waiters"));
}

static int is_a(struct pyproc *py, uint64_t type, uint64_t base)
{
	return base && (type == base || pytype_is_subtype(py, type, base));
}

uint64_t py_aiohttp_connector_of(struct pyproc *py,
				 const struct py_prim_types *t, uint64_t obj)
{
	struct cs_err err;
	uint64_t type, proto;

	cs_err_init(&err);
	if (!obj || !t->aiohttp_connection ||
	    pyobj_read_type(py, obj, &type, &err) < 0)
		return 0;
	/* the manager, its response, the response's connection: each a
	 * step down, none back up */
	if (is_a(py, type, t->aiohttp_request_cm) &&
	    ((obj = prim_attr(py, obj, "_resp")) == 0 ||
	     pyobj_read_type(py, obj, &type, &err) < 0))
		return 0;
	if (is_a(py, type, t->aiohttp_response) &&
	    ((obj = prim_attr(py, obj, "_connection")) == 0 ||
	     pyobj_read_type(py, obj, &type, &err) < 0))
		return 0;
	if (!is_a(py, type, t->aiohttp_connection))
		return 0;
	proto = prim_attr(py, obj, "_protocol");
	return proto && proto != py->types.none ?
	       prim_attr(py, obj, "_connector") : 0;
}
