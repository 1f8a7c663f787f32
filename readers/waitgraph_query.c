/*
 * The wait-for graph once built: its storage, the edges indexed by
 * their ends, the cycles, and the queries of readers/waitgraph.h.  The
 * building is readers/waitgraph.c.
 */
#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/banned.h"

void py_waitgraph_init(struct py_waitgraph *g)
{
	memset(g, 0, sizeof(*g));
	cycle_list_init(&g->cycles);
	addrmap_init(&g->index);
	addrmap_init(&g->drive_index);
	addrmap_init(&g->entered_index);
	addrmap_init(&g->kind_index);
}

void py_waitgraph_release(struct py_waitgraph *g)
{
	free(g->nodes);
	free(g->edges);
	free(g->prims);
	free(g->drives);
	free(g->entered);
	free(g->test);
	free(g->out_start);
	free(g->out_edges);
	free(g->in_start);
	free(g->in_edges);
	free(g->any_blocked);
	cycle_list_release(&g->cycles);
	addrmap_release(&g->index);
	addrmap_release(&g->drive_index);
	addrmap_release(&g->entered_index);
	addrmap_release(&g->kind_index);
	py_waitgraph_init(g);
}

/* A node's kind and index as one non-zero map key: the kind above any
 * index a process can have. */
static uint64_t node_key(enum wg_kind kind, size_t index)
{
	const uint64_t index_mask = (1ull << 56) - 1;

	return ((uint64_t)kind + 1) << 56 | ((uint64_t)index & index_mask);
}

size_t py_waitgraph_add_node(struct py_waitgraph *g, enum wg_kind kind,
			     size_t index)
{
	uint64_t key = node_key(kind, index);

	g->nodes = xgrow(g->nodes, &g->anodes, g->nnodes + 1,
			 sizeof(*g->nodes));
	memset(&g->nodes[g->nnodes], 0, sizeof(g->nodes[0]));
	g->nodes[g->nnodes].kind = kind;
	g->nodes[g->nnodes].index = index;
	if (!addrmap_get(&g->kind_index, key, NULL))
		addrmap_put(&g->kind_index, key,
			    (void *)(uintptr_t)(g->nnodes + 1));
	return g->nnodes++;
}

size_t py_waitgraph_add_units(struct py_waitgraph *g, size_t nthreads,
			      size_t ntasks)
{
	size_t i, base;

	/* Counts known beforehand: without the room, the array would grow
	 * by doubling and the index rehash on the way (nine times to the
	 * 16,384 slots of 10k tasks).  Beyond any memory: grow as they go. */
	if (nthreads < SIZE_MAX / 4 && ntasks < SIZE_MAX / 4 - nthreads &&
	    g->nnodes < SIZE_MAX / 4) {
		g->nodes = xgrow(g->nodes, &g->anodes,
				 g->nnodes + nthreads + ntasks,
				 sizeof(*g->nodes));
		addrmap_reserve(&g->kind_index,
				g->kind_index.len + nthreads + ntasks);
	}
	for (i = 0; i < nthreads; i++)
		py_waitgraph_add_node(g, WG_THREAD, i);
	base = g->nnodes;
	for (i = 0; i < ntasks; i++)
		py_waitgraph_add_node(g, WG_TASK, i);
	return base;
}

long py_waitgraph_node_of(const struct py_waitgraph *g, enum wg_kind kind,
			  size_t index)
{
	uintptr_t k = (uintptr_t)addrmap_get(&g->kind_index,
					     node_key(kind, index), NULL);

	return k ? (long)(k - 1) : -1;
}

/* How an edge is grouped: under one end, by its index, or, for the
 * cycle search, under the node that waits and by the node it waits for
 * (a waits-for edge as it is, a holds edge reversed: a lock waits for
 * its holder). */
enum edge_group { BY_FROM, BY_TO, BY_WAITER };

/*
 * Group the edges by one node of each (a counting sort, stable: each
 * node's keep the order they were added in): edges of node u are
 * vals[start[u] .. start[u + 1]), each val an edge index, or with
 * BY_WAITER the node waited for.
 */
static void group_edges(const struct py_waitgraph *g, enum edge_group by,
			size_t **start_out, size_t **vals_out)
{
	size_t *start = xcalloc(g->nnodes + 1, sizeof(*start));
	size_t *fill = xcalloc(g->nnodes + 1, sizeof(*fill));
	size_t *vals = xcalloc(g->nedges + 1, sizeof(*vals));
	size_t i, u, v;

	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		int fwd = by == BY_FROM ||
			  (by == BY_WAITER && e->kind == WG_WAITS_FOR);

		if (by == BY_WAITER && !wg_any_counts(g, e))
			continue;
		start[(fwd ? e->from : e->to) + 1]++;
	}
	for (i = 0; i < g->nnodes; i++)
		start[i + 1] += start[i];
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		int fwd = by == BY_FROM ||
			  (by == BY_WAITER && e->kind == WG_WAITS_FOR);

		if (by == BY_WAITER && !wg_any_counts(g, e))
			continue;  /* the waiter's other choices may end it */
		u = fwd ? e->from : e->to;
		v = by != BY_WAITER ? i : fwd ? e->to : e->from;
		vals[start[u] + fill[u]++] = v;
	}
	free(fill);
	*start_out = start;
	*vals_out = vals;
}

static const size_t *edges_at(const size_t *start, const size_t *idx,
			      size_t nnodes, size_t node, size_t *n)
{
	*n = 0;
	if (!start || node >= nnodes)
		return NULL;
	*n = start[node + 1] - start[node];
	return idx + start[node];
}

const size_t *py_waitgraph_out(const struct py_waitgraph *g, size_t node,
			       size_t *n)
{
	return edges_at(g->out_start, g->out_edges, g->nnodes, node, n);
}

const size_t *py_waitgraph_in(const struct py_waitgraph *g, size_t node,
			      size_t *n)
{
	return edges_at(g->in_start, g->in_edges, g->nnodes, node, n);
}

static size_t edges_into(const struct py_waitgraph *g, enum wg_edge_kind kind,
			 size_t node, size_t *out, size_t max)
{
	size_t i, k, m, n = 0;
	const size_t *in = py_waitgraph_in(g, node, &m);

	for (k = 0; k < m; k++) {
		i = in[k];
		if (g->edges[i].kind == kind) {
			if (n < max)
				out[n] = g->edges[i].from;
			n++;
		}
	}
	return n;
}

size_t py_waitgraph_holders(const struct py_waitgraph *g, size_t obj,
			    size_t *out, size_t max)
{
	return edges_into(g, WG_HOLDS, obj, out, max);
}

size_t py_waitgraph_waiters(const struct py_waitgraph *g, size_t node,
			    size_t *out, size_t max)
{
	return edges_into(g, WG_WAITS_FOR, node, out, max);
}

#define WG_MAX_WORKER_HOPS 8   /* futures followed to a worker thread */

long py_waitgraph_worker(const struct py_waitgraph *g, size_t node)
{
	size_t hops;

	for (hops = 0; hops < WG_MAX_WORKER_HOPS; hops++) {
		const size_t *out;
		size_t n, k;
		long next = -1;

		out = py_waitgraph_out(g, node, &n);
		for (k = 0; k < n; k++) {
			const struct wg_edge *e = &g->edges[out[k]];
			const struct wg_node *to = &g->nodes[e->to];

			if (e->kind != WG_WAITS_FOR)
				continue;
			if (to->kind == WG_THREAD)
				return (long)e->to;
			if (next < 0 && to->kind == WG_OBJECT &&
			    g->prims[to->index].kind == PY_PRIM_CFUTURE)
				next = (long)e->to;
		}
		if (next < 0)
			return -1;
		node = (size_t)next;
	}
	return -1;
}

long py_waitgraph_cfuture_elsewhere(const struct py_waitgraph *g,
				    size_t node)
{
	const size_t *out;
	size_t n, k;

	if (py_waitgraph_worker(g, node) >= 0)
		return -1;
	out = py_waitgraph_out(g, node, &n);
	for (k = 0; k < n; k++) {
		const struct wg_edge *e = &g->edges[out[k]];
		const struct wg_node *to = &g->nodes[e->to];

		if (e->kind == WG_WAITS_FOR && to->kind == WG_OBJECT &&
		    g->prims[to->index].kind == PY_PRIM_CFUTURE)
			return (long)e->to;
	}
	return -1;
}

long py_waitgraph_task_behind_cfuture(const struct py_waitgraph *g,
				      size_t node)
{
	const size_t *out, *out2;
	size_t n, k, n2, k2;

	out = py_waitgraph_out(g, node, &n);
	/* Bounded by the node's edges, and each future's. */
	for (k = 0; k < n; k++) {
		const struct wg_edge *e = &g->edges[out[k]];
		const struct wg_node *to = &g->nodes[e->to];

		if (e->kind != WG_WAITS_FOR || to->kind != WG_OBJECT ||
		    g->prims[to->index].kind != PY_PRIM_CFUTURE)
			continue;
		out2 = py_waitgraph_out(g, e->to, &n2);
		for (k2 = 0; k2 < n2; k2++) {
			const struct wg_edge *f = &g->edges[out2[k2]];

			if (f->kind == WG_WAITS_FOR &&
			    g->nodes[f->to].kind == WG_TASK && f->to != node)
				return (long)f->to;
		}
	}
	return -1;
}

int py_waitgraph_waits(const struct py_waitgraph *g, size_t node)
{
	size_t k, m;
	const size_t *out = py_waitgraph_out(g, node, &m);

	for (k = 0; k < m; k++)
		if (g->edges[out[k]].kind == WG_WAITS_FOR)
			return 1;
	return 0;
}

const struct wg_entered *py_waitgraph_entered_of(const struct py_waitgraph *g,
						 size_t gen)
{
	uintptr_t k = (uintptr_t)addrmap_get(&g->entered_index,
					     (uint64_t)gen + 1, NULL);

	return k ? &g->entered[k - 1] : NULL;
}

const struct wg_drive *py_waitgraph_drive_of(const struct py_waitgraph *g,
					     size_t gen)
{
	uintptr_t k = (uintptr_t)addrmap_get(&g->drive_index,
					     (uint64_t)gen + 1, NULL);

	return k ? &g->drives[k - 1] : NULL;
}

/* Cycles over waits-for edges and holds edges reversed (a lock waits
 * for its holder). */
static void find_cycles(struct py_waitgraph *g)
{
	struct cycle_graph cg;
	size_t *first, *to;

	group_edges(g, BY_WAITER, &first, &to);
	cg.n = g->nnodes;
	cg.first = first;
	cg.to = to;
	cycles_find(&cg, &g->cycles);
	free(first);
	free(to);
}

/* The drives of each task: dlist[dstart[t] .. dstart[t + 1]) index
 * g->drives, in the order they were added (outermost first).  One
 * counting pass: scanning every drive for every task is quadratic in a
 * tornado app's coroutines. */
void wg_drives_by_task(const struct py_waitgraph *g, size_t ntasks,
		       size_t **dstart, size_t **dlist)
{
	size_t *start = xcalloc(ntasks + 2, sizeof(*start));
	size_t *list = xmalloc((g->ndrives ? g->ndrives : 1) * sizeof(*list));
	size_t k;

	for (k = 0; k < g->ndrives; k++)
		if (g->drives[k].task < ntasks)
			start[g->drives[k].task + 2]++;
	for (k = 2; k < ntasks + 2; k++)
		start[k] += start[k - 1];
	/* start[t + 1] is now where task t's drives go; filling moves it
	 * to where task t + 1's begin. */
	for (k = 0; k < g->ndrives; k++)
		if (g->drives[k].task < ntasks)
			list[start[g->drives[k].task + 1]++] = k;
	*dstart = start;
	*dlist = list;
}

void wg_finish(struct py_waitgraph *g)
{
	size_t i;

	wg_settle_any(g);
	/* Asked once per generator by the report: a scan of every drive
	 * each time is quadratic in a tornado app's coroutines. */
	addrmap_reserve(&g->drive_index, g->ndrives);
	for (i = 0; i < g->ndrives; i++)
		if (!addrmap_get(&g->drive_index, (uint64_t)g->drives[i].gen + 1,
				 NULL))
			addrmap_put(&g->drive_index,
				    (uint64_t)g->drives[i].gen + 1,
				    (void *)(uintptr_t)(i + 1));
	group_edges(g, BY_FROM, &g->out_start, &g->out_edges);
	group_edges(g, BY_TO, &g->in_start, &g->in_edges);
	wg_any_blocked(g);
	find_cycles(g);
}
