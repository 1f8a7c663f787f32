/*
 * Greenlets in the wait-for graph.  A parked greenlet (suspended, not a
 * thread's main greenlet, not gevent's hub) is a unit like a task: its
 * frames say which locks its `with` blocks hold.  What it waits on no
 * frame says when that is one of gevent's primitives (a Cython call
 * leaves none): the primitive keeps its waiting greenlets itself
 * (py_prim_waiter_greenlets()), and gevent's RLock names its owner.
 * The primitives are those the heap walk found (a->waitables).
 */
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/funcs.h"
#include "readers/primitives_internal.h"
#include "common/banned.h"

/* Waiting greenlets read per primitive, and in all: a heap of a
 * million primitives, each with a long list, is read for the first
 * million waiters. */
#define WG_MAX_GREENLET_WAITERS 4096
#define WG_MAX_GREENLET_WAITS (1u << 20)

/* Suspended (a thread's main greenlet too: gevent's, parked in joinall()
 * or a get() while the hub runs), or not started yet (one may join it),
 * not the hub. */
static int parked(const struct py_greenlet *gr)
{
	return (gr->state == PY_GREENLET_SUSPENDED ||
		gr->state == PY_GREENLET_NOT_STARTED) &&
	       !py_greenlet_is_hub(gr);
}

void wg_add_greenlets(struct wg_build *b)
{
	const struct py_frame *fr[WG_MAX_FRAMES];
	size_t i, k, node;

	for (i = 0; b->gl && i < b->gl->n; i++) {
		const struct py_greenlet *gr = &b->gl->v[i];

		if (!parked(gr))
			continue;
		node = py_waitgraph_add_node(b->g, WG_GREENLET, i);
		for (k = 0; k < gr->nframes && k < WG_MAX_FRAMES; k++)
			fr[k] = &gr->frames[k];
		/* switched away inside a call, as a thread's innermost */
		wg_scan_unit(b, node, fr, k, WG_SCAN_MIDCALL, NULL);
	}
}

/* The greenlet nodes by address: addr -> node + 1. */
static void greenlet_nodes(const struct wg_build *b, struct addrmap *out)
{
	const struct py_waitgraph *g = b->g;
	size_t i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].kind == WG_GREENLET)
			addrmap_put(out, b->gl->v[g->nodes[i].index].addr,
				    (void *)(uintptr_t)(i + 1));
}

/* The inner objects of gevent's primitives among the waitables (an
 * RLock's Semaphore, a JoinableQueue's Event): their waiters wait for
 * the outer one, which says so itself. */
static void inner_objects(struct wg_build *b, struct addrmap *out)
{
	struct py_prim p;
	size_t i;

	for (i = 0; i < b->a->nwaitables; i++)
		if ((b->a->waitables[i].kind == PY_PRIM_RLOCK ||
		     b->a->waitables[i].kind == PY_PRIM_QUEUE) &&
		    wg_prim_read(b, b->a->waitables[i].addr, &p) &&
		    p.family == PY_PRIM_GEVENT && p.inner)
			addrmap_add(out, p.inner);
}

/* A waits-for edge; through a MultipleWaiter a "first of" one
 * (wg_edge.any): gevent.wait(count=1) and iwait() end at the first
 * done, and the object does not say which it is.  A cycle through such
 * an edge is then counted only where each choice leads back (a
 * joinall() of all may so miss a deadlock; it never makes one up). */
static void add_wait(struct wg_build *b, size_t from, size_t to,
		     const struct py_gevent_waiter *w)
{
	size_t n = b->g->nedges;

	if (!w->maybe_first_of) {
		wg_add_edge(b, WG_WAITS_FOR, from, to, NULL);
		return;
	}
	wg_add_any_edge(b, from, to, 0);
	if (b->g->nedges > n)
		b->g->edges[n].maybe_all = 1;
}

/* One primitive: edges from the greenlets waiting on it, and from the
 * greenlet owning it (an RLock).  A greenlet whose frames said already
 * what it waits on (waited[node]: threading's RLock or Queue of a
 * monkey-patched program, over the gevent lock they wait in) keeps that
 * wait, the outermost. */
/*
 * The node of the greenlet at addr that owns a lock: a parked one's, or
 * one made now for a greenlet of another state, a dead one above all
 * (a greenlet that ended holding an RLock: what its waiters wait for).
 * all: every greenlet's address -> index + 1.  0, or node + 1.
 */
static uintptr_t owner_node(struct wg_build *b, struct addrmap *nodes,
			    const struct addrmap *all, uint64_t addr)
{
	uintptr_t v = (uintptr_t)addrmap_get(nodes, addr, NULL), k;

	if (v || !(k = (uintptr_t)addrmap_get(all, addr, NULL)))
		return v;
	v = py_waitgraph_add_node(b->g, WG_GREENLET, k - 1) + 1;
	addrmap_put(nodes, addr, (void *)v);
	return v;
}

static size_t link_prim(struct wg_build *b, const struct py_prim *p,
			struct addrmap *nodes, const struct addrmap *all,
			const unsigned char *waited,
			struct py_gevent_waiter *waiters)
{
	size_t n, k;
	uintptr_t from;
	long obj = -1;

	n = py_prim_waiter_greenlets(b->py, &b->types, p, waiters,
				     WG_MAX_GREENLET_WAITERS);
	for (k = 0; k < n; k++) {
		from = waiters[k].greenlet ? (uintptr_t)addrmap_get(
			nodes, waiters[k].greenlet, NULL) : 0;
		if (from && !waited[from - 1] &&
		    (obj >= 0 || (obj = wg_object_node(b, p->addr)) >= 0))
			add_wait(b, from - 1, (size_t)obj, &waiters[k]);
	}
	from = p->owner_greenlet ?
	       owner_node(b, nodes, all, p->owner_greenlet) : 0;
	if (from && (obj >= 0 || (obj = wg_object_node(b, p->addr)) >= 0))
		wg_add_edge(b, WG_HOLDS, from - 1, (size_t)obj, NULL);
	return n;
}

/*
 * Where gevent's monkey-patching made thread idents greenlets'
 * (get_ident() is id(getcurrent()) then), an ident that is a greenlet
 * node's address is that greenlet: threading's Python RLock is held by
 * the greenlet its owner names, and a threading.Thread being joined
 * waits for the greenlet its _ident names (wg_link_joined() finds no
 * thread for it).  (A thread's ident is no address of a greenlet
 * object.)
 */
static void link_patched_idents(struct wg_build *b,
				const struct addrmap *nodes)
{
	const struct py_waitgraph *g = b->g;
	size_t i, nn = g->nnodes;
	uintptr_t unit;

	for (i = 0; i < nn; i++) {
		const struct py_prim *p;

		if (g->nodes[i].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->kind == PY_PRIM_RLOCK && p->family == PY_PRIM_THREADING &&
		    p->owner &&
		    (unit = (uintptr_t)addrmap_get(nodes, p->owner, NULL)))
			wg_add_edge(b, WG_HOLDS, unit - 1, i, NULL);
		else if (p->kind == PY_PRIM_THREAD && p->ident &&
			 (unit = (uintptr_t)addrmap_get(nodes, p->ident, NULL)))
			wg_add_edge(b, WG_WAITS_FOR, i, unit - 1, NULL);
	}
}

/* Greenlets waiting for others to end (join(), joinall()): an edge
 * from each to the greenlet it waits for, within the budget left. */
static void link_joiners(struct wg_build *b, const struct addrmap *nodes,
			 const unsigned char *waited,
			 struct py_gevent_waiter *waiters, size_t read)
{
	const struct py_waitgraph *g = b->g;
	size_t i, k, n, nn = g->nnodes;
	uintptr_t from;

	for (i = 0; i < nn && read < WG_MAX_GREENLET_WAITS; i++) {
		if (g->nodes[i].kind != WG_GREENLET)
			continue;
		n = py_gevent_joiners(b->py, &b->types,
				      b->gl->v[g->nodes[i].index].addr,
				      waiters, WG_MAX_GREENLET_WAITERS);
		read += n;
		for (k = 0; k < n; k++) {
			from = waiters[k].greenlet ? (uintptr_t)addrmap_get(
				nodes, waiters[k].greenlet, NULL) : 0;
			/* (a joiner whose frames said what it waits on, a
			 * patched Thread.join(), keeps that wait) */
			if (from && from - 1 != i && !waited[from - 1])
				add_wait(b, from - 1, i, &waiters[k]);
		}
	}
}

void wg_link_greenlets(struct wg_build *b)
{
	struct addrmap nodes, inner, all;
	unsigned char *waited;
	struct py_gevent_waiter *waiters;
	struct py_prim p;
	size_t i, read = 0;
	int found;

	if (!b->gl || !b->gl->n)
		return;
	addrmap_init(&nodes);
	greenlet_nodes(b, &nodes);
	if (!nodes.len) {
		addrmap_release(&nodes);
		return;
	}
	addrmap_init(&inner);
	if (b->a)
		inner_objects(b, &inner);
	addrmap_init(&all);
	for (i = 0; i < b->gl->n; i++)
		addrmap_put(&all, b->gl->v[i].addr, (void *)(uintptr_t)(i + 1));
	waiters = xmallocarray(WG_MAX_GREENLET_WAITERS, sizeof(*waiters));
	/* (nodes of primitives added on the way have no edges yet; a
	 * greenlet's may be added too, owner_node(): room for each) */
	waited = xcalloc(b->g->nnodes + b->gl->n + 1, 1);
	for (i = 0; i < b->g->nedges; i++)
		if (b->g->edges[i].kind == WG_WAITS_FOR &&
		    b->g->edges[i].from < b->g->nnodes)
			waited[b->g->edges[i].from] = 1;
	/* Bounded by the waitables kept (PY_MAX_WAITABLES) and the
	 * waiters read. */
	for (i = 0; b->a && i < b->a->nwaitables &&
		    read < WG_MAX_GREENLET_WAITS; i++) {
		uint64_t addr = b->a->waitables[i].addr;

		addrmap_get(&inner, addr, &found);
		if (!found && wg_prim_read(b, addr, &p) &&
		    p.family == PY_PRIM_GEVENT)
			read += link_prim(b, &p, &nodes, &all, waited,
					  waiters);
	}
	link_joiners(b, &nodes, waited, waiters, read);
	if (b->types.gevent_patched)
		link_patched_idents(b, &nodes);
	free(waited);
	free(waiters);
	addrmap_release(&inner);
	addrmap_release(&all);
	addrmap_release(&nodes);
}
