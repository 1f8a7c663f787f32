#include "cli/watch_awaits.h"

#include "readers/waitgraph.h"
#include "common/banned.h"

/* Task node n of c's graph, as t last saw it: moved on its own at or
 * since the sample before this one (not at its first sample, where it
 * was only seen)? */
static int moved(const struct watch_tracker *t, const struct collection *c,
		 size_t n)
{
	const struct wg_node *nd = &c->graph.nodes[n];
	const struct watch_item *it;

	/* (not one running its step now: a step that holds its loop up
	 * keeps its awaiter from running too, whatever it does) */
	if (nd->kind != WG_TASK || nd->index >= c->async.ntasks ||
	    c->async.tasks[nd->index].running)
		return 0;
	it = watch_find(t, WATCH_TASK, c->async.tasks[nd->index].addr);
	return it && !it->gone && t->prev > 0 && it->own_progress >= t->prev &&
	       it->own_progress > it->first_seen;
}

int watch_awaited_moved(const struct watch_tracker *t,
			const struct collection *c, size_t task)
{
	const struct py_waitgraph *g = &c->graph;
	long node = py_waitgraph_node_of(g, WG_TASK, task);
	size_t k, j, m, m2, looked = 0;
	const size_t *out, *out2;

	if (node < 0 || !t->samples)
		return 0;
	out = py_waitgraph_out(g, (size_t)node, &m);
	for (k = 0; k < m && looked < WATCH_AWAITED_LOOKED_AT; k++) {
		const struct wg_edge *e = &g->edges[out[k]];
		const struct wg_node *to;

		if (e->kind != WG_WAITS_FOR || e->to >= g->nnodes)
			continue;
		to = &g->nodes[e->to];
		if (to->kind == WG_TASK) {
			looked++;
			if (moved(t, c, e->to))
				return 1;
			continue;
		}
		/* a gather's children: the edges out of its object */
		if (to->kind != WG_OBJECT ||
		    !py_prim_is_future(&g->prims[to->index]))
			continue;
		out2 = py_waitgraph_out(g, e->to, &m2);
		for (j = 0; j < m2 && looked < WATCH_AWAITED_LOOKED_AT; j++) {
			const struct wg_edge *f = &g->edges[out2[j]];

			if (f->kind != WG_WAITS_FOR || f->to >= g->nnodes ||
			    g->nodes[f->to].kind != WG_TASK)
				continue;
			looked++;
			if (moved(t, c, f->to))
				return 1;
		}
	}
	return 0;
}
