/*
 * aiohttp's connector in the wait-for graph: a task whose request found
 * no connection free waits for the connector (wg_frame_waits_on()); the
 * tasks using its connections hold it.  A task holds one while its
 * request runs (ClientSession._request's `conn`), while it makes one
 * (BaseConnector.connect()'s `placeholder`), while it reads the response
 * in `async with session.get(...) as resp:` (the manager its with block
 * holds: wg_add_holds()), and while a frame of its program's own keeps
 * the response in a local, not read nor released.  Holds are added only for a
 * connector something waits for: a client's hundred requests in flight
 * with none waiting are no answer to anything.
 */
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "common/util.h"
#include "readers/code.h"
#include "readers/fields.h"
#include "common/banned.h"

/* A hold of connector `conn` by node through a connection of `key`,
 * when it is one, has waiters, and that connection keeps them waiting
 * (its limit per host, when that is what binds, is the waiters'). */
static int hold_connector(struct wg_build *b, size_t node, uint64_t conn,
			  uint64_t key, const struct py_frame *at,
			  int took_line)
{
	struct py_prim p;
	long obj;

	if (!conn || !wg_prim_read(b, conn, &p) ||
	    p.family != PY_PRIM_AIOHTTP || p.waiters <= 0 ||
	    !py_aiohttp_key_blocks(b->py, &b->types, &p, key) ||
	    (obj = wg_object_node(b, conn)) < 0)
		return 0;
	wg_add_hold(b, node, (size_t)obj, at, took_line);
	return 1;
}

int wg_aiohttp_hold(struct wg_build *b, size_t node, uint64_t mgr,
		    const struct py_frame *at, int took_line)
{
	uint64_t key, conn = py_aiohttp_connector_of(b->py, &b->types, mgr,
						     &key);

	return hold_connector(b, node, conn, key, at, took_line);
}

/* Locals of a frame looked at for a response kept in one. */
#define AIOHTTP_MAX_LOCALS 64

/* A response (or connection, or request manager) kept in one of frame
 * f's locals, not read nor released: f holds its connection. */
static void hold_locals(struct wg_build *b, size_t node,
			const struct py_frame *f)
{
	const struct py_layout *L = &b->py->layout;
	uint64_t v[AIOHTTP_MAX_LOCALS];
	size_t n = f->code->nlocalsplus, i;
	struct cs_err err;

	if (n > AIOHTTP_MAX_LOCALS)
		n = AIOHTTP_MAX_LOCALS;
	cs_err_init(&err);
	if (!n || py_read_words(b->py, f->addr + (uint64_t)(L->f_back >= 0 ?
			L->f_localsplus : L->if_localsplus), v, n, &err) < 0)
		return;
	for (i = 0; i < n; i++)
		if (v[i] & ~(uint64_t)L->stackref_tag_mask)
			(void)wg_aiohttp_hold(b, node,
					      v[i] & ~(uint64_t)
					      L->stackref_tag_mask, f, 0);
}

void wg_link_aiohttp(struct wg_build *b, size_t node,
		     const struct py_frame *const *f, size_t n)
{
	const struct py_frame *blame = b->g->nodes[node].blame;
	size_t k;

	if (!b->types.aiohttp_connection)
		return;
	/* The program's own frames (from the one the task is blamed on
	 * out): a response kept in a local. */
	for (k = 0; blame && k < n && f[k] != blame; k++)
		;
	for (; blame && k < n; k++)
		hold_locals(b, node, f[k]);
	/* (held at the program's own line: no frame of aiohttp's) */
	for (k = 0; k < n; k++) {
		if (py_code_is(f[k]->code, "/aiohttp/client.py", "_request"))
			(void)wg_aiohttp_hold(b, node,
					      py_frame_local(b->py, f[k], "conn"),
					      NULL, 0);
		else if (py_code_is(f[k]->code, "/aiohttp/connector.py",
				    "connect") &&
			 py_frame_local(b->py, f[k], "placeholder"))
			(void)hold_connector(b, node,
					     py_frame_local(b->py, f[k], "self"),
					     py_frame_local(b->py, f[k], "key"),
					     NULL, 0);
	}
}
