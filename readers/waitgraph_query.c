/*
 * The wait-for graph once built: its storage, the edges indexed by
 * their ends, the cycles, and the queries of readers/waitgraph.h.  The
 * building is readers/waitgraph.c.
 */
#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

void py_waitgraph_init(struct py_waitgraph *g)
{
	memset(g, 0, sizeof(*g));
	cycle_list_init(&g->cycles);
	addrmap_init(&g->index);
}

void py_waitgraph_release(struct py_waitgraph *g)
{
	free(g->nodes);
	free(g->edges);
	free(g->prims);
	free(g->drives);
	free(g->test);
	free(g->out_start);
	free(g->out_edges);
	free(g->in_start);
	free(g->in_edges);
	cycle_list_release(&g->cycles);
	addrmap_release(&g->index);
	py_waitgraph_init(g);
}


long py_waitgraph_node_of(const struct py_waitgraph *g, enum wg_kind kind,
			  size_t index)
{
	size_t i;

	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i].kind == kind && g->nodes[i].index == index)
			return (long)i;
	return -1;
}

/* The sources of `kind` edges into node, at most max kept. */
/* Index the edges by one end (`from` when by_from, else `to`): a
 * counting sort, stable, so each node's edges keep their order. */
static void index_edges(const struct py_waitgraph *g, int by_from,
			size_t **start_out, size_t **edges_out)
{
	size_t *start = xcalloc(g->nnodes + 1, sizeof(*start));
	size_t *fill = xcalloc(g->nnodes + 1, sizeof(*fill));
	size_t *idx = xcalloc(g->nedges + 1, sizeof(*idx));
	size_t i, u;

	for (i = 0; i < g->nedges; i++)
		start[(by_from ? g->edges[i].from : g->edges[i].to) + 1]++;
	for (i = 0; i < g->nnodes; i++)
		start[i + 1] += start[i];
	for (i = 0; i < g->nedges; i++) {
		u = by_from ? g->edges[i].from : g->edges[i].to;
		idx[start[u] + fill[u]++] = i;
	}
	free(fill);
	*start_out = start;
	*edges_out = idx;
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


const struct wg_drive *py_waitgraph_drive_of(const struct py_waitgraph *g,
					     size_t gen)
{
	size_t i;

	for (i = 0; i < g->ndrives; i++)
		if (g->drives[i].gen == gen)
			return &g->drives[i];
	return NULL;
}


/* Cycles over waits-for edges and holds edges reversed (a lock waits
 * for its holder). */
static void find_cycles(struct py_waitgraph *g)
{
	size_t *first = xcalloc(g->nnodes + 1, sizeof(*first));
	size_t *to = xcalloc(g->nedges + 1, sizeof(*to));
	size_t *fill = xcalloc(g->nnodes + 1, sizeof(*fill));
	struct cycle_graph cg;
	size_t i;

	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];

		first[(e->kind == WG_WAITS_FOR ? e->from : e->to) + 1]++;
	}
	for (i = 0; i < g->nnodes; i++)
		first[i + 1] += first[i];
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];
		size_t u = e->kind == WG_WAITS_FOR ? e->from : e->to;
		size_t v = e->kind == WG_WAITS_FOR ? e->to : e->from;

		to[first[u] + fill[u]++] = v;
	}
	cg.n = g->nnodes;
	cg.first = first;
	cg.to = to;
	cycles_find(&cg, &g->cycles);
	free(first);
	free(to);
	free(fill);
}

void wg_finish(struct py_waitgraph *g)
{
	index_edges(g, 1, &g->out_start, &g->out_edges);
	index_edges(g, 0, &g->in_start, &g->in_edges);
	find_cycles(g);
}
