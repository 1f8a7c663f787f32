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

#include <string.h>

#include "common/addrmap.h"
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

enum { AIO_NONE, AIO_CM, AIO_RESPONSE, AIO_CONNECTION };

static int judge(struct pyproc *py, const struct py_prim_types *t,
		 uint64_t type)
{
	static const int order[] = { AIO_CM, AIO_RESPONSE, AIO_CONNECTION };
	const uint64_t bases[] = { t->aiohttp_request_cm, t->aiohttp_response,
				   t->aiohttp_connection };
	size_t i;

	for (i = 0; i < 3; i++)
		if (bases[i] && (type == bases[i] ||
				 pytype_is_subtype(py, type, bases[i])))
			return order[i];
	return AIO_NONE;
}

/* Which of aiohttp's classes obj is an instance of, judged once per
 * type; *type set. */
static int kind_of(struct pyproc *py, const struct py_prim_types *t,
		   uint64_t obj, uint64_t *type)
{
	struct cs_err err;
	uintptr_t v;
	int found, k;

	cs_err_init(&err);
	if (!obj || pyobj_read_type(py, obj, type, &err) < 0)
		return AIO_NONE;
	if (!t->aiohttp_verdicts)
		return judge(py, t, *type);
	v = (uintptr_t)addrmap_get(t->aiohttp_verdicts, *type, &found);
	if (found)
		return (int)v - 1;
	k = judge(py, t, *type);
	addrmap_put(t->aiohttp_verdicts, *type, (void *)(uintptr_t)(k + 1));
	return k;
}

uint64_t py_aiohttp_connector_of(struct pyproc *py,
				 const struct py_prim_types *t, uint64_t obj,
				 uint64_t *key)
{
	uint64_t type, proto, conn;
	int k;

	*key = 0;
	if (!t->aiohttp_connection)
		return 0;
	/* the manager, its response, the response's connection: each a
	 * step down, none back up */
	k = kind_of(py, t, obj, &type);
	if (k == AIO_CM) {
		obj = prim_attr(py, obj, "_resp");
		k = kind_of(py, t, obj, &type);
		if (k != AIO_RESPONSE)
			return 0;
	}
	if (k == AIO_RESPONSE) {
		obj = prim_attr(py, obj, "_connection");
		k = kind_of(py, t, obj, &type);
	}
	if (k != AIO_CONNECTION)
		return 0;
	proto = prim_attr(py, obj, "_protocol");
	if (!proto || proto == py->types.none)
		return 0;
	conn = prim_attr(py, obj, "_connector");
	if (conn)
		*key = prim_attr(py, obj, "_key");
	return conn;
}

/* A ConnectionKey's host and port: attributes (3.8's attrs class, with
 * slots) or a tuple's first two items (a NamedTuple from 3.9).  0, or
 * -1 when they cannot be read. */
static int key_host_port(struct pyproc *py, uint64_t key, const char **host,
			 int64_t *port)
{
	uint64_t items[2], type, h = 0, p = 0;
	struct cs_err err;
	size_t n = 0;

	cs_err_init(&err);
	if (!key || pyobj_read_type(py, key, &type, &err) < 0)
		return -1;
	if (type == py->types.tuple ||
	    pytype_is_subtype(py, type, py->types.tuple)) {
		if (pyseq_items(py, key, items, 2, &n, &err) < 0 || n < 2)
			return -1;
		h = items[0];
		p = items[1];
	} else {
		h = prim_attr(py, key, "host");
		p = prim_attr(py, key, "port");
	}
	*port = p && p != py->types.none ? prim_int(py, p) : -1;
	return h && pystr_get(py, h, host, &err) == 0 ? 0 : -1;
}

int py_aiohttp_key_blocks(struct pyproc *py, const struct py_prim_types *t,
			  const struct py_prim *p, uint64_t key)
{
	struct pydict_entry e[AIOHTTP_MAX_KEYS];
	const char *host, *whost;
	int64_t port, wport;
	struct cs_err err;
	size_t used = 0, i;

	/* the total limit reached: any connection frees a waiter */
	if (p->limit > 0 && p->in_use >= p->limit)
		return 1;
	/* else the limit per host: one of a waiter's host and port */
	cs_err_init(&err);
	if (key_host_port(py, key, &host, &port) < 0 ||
	    pydict_entries(py, prim_attr(py, p->addr, "_waiters"), e,
			   AIOHTTP_MAX_KEYS, &used, &err) < 0)
		return 0;
	for (i = 0; i < used && i < AIOHTTP_MAX_KEYS; i++)
		if (prim_len(py, t, e[i].value) > 0 &&
		    key_host_port(py, e[i].key, &whost, &wport) == 0 &&
		    wport == port && !strcmp(whost, host))
			return 1;
	return 0;
}
