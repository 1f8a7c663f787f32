/*
 * The wait-for graph's "first of" waits (wg_edge.any): a waiter that goes
 * on after the first of several ends is stuck for good only when none of
 * them can end.  Its "any" edges count in the cycle search only when
 * each leads back to it through plain waits and holds; and an await
 * cycle (readers/task_cycles.c, which knows no "any") through such a
 * wait that does not is no cycle.
 */
#include "readers/waitgraph_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/tasks.h"
#include "common/banned.h"

/* Waiters whose "first of" waits are followed back: each costs a walk
 * of the graph. */
#define ANY_WAITERS_MAX 64

void wg_settle_any(struct py_waitgraph *g)
{
	size_t *n = xcalloc(g->nnodes + 1, sizeof(*n)), i;

	for (i = 0; i < g->nedges; i++)
		n[g->edges[i].from] += g->edges[i].any == UINT_MAX;
	for (i = 0; i < g->nedges; i++) {
		struct wg_edge *e = &g->edges[i];

		if (e->any == UINT_MAX)  /* added uncounted: its waiter's */
			e->any = n[e->from] < UINT_MAX ? (unsigned)n[e->from] :
				 UINT_MAX - 1;
		if (e->any < 2)
			e->any = 0;
	}
	free(n);
}

/*
 * Mark (with stamp) the nodes that wait for w through plain edges: u
 * waits for v (a waits-for edge), an object waits for its holder (a
 * holds edge, reversed).  queue: room for every node.
 */
static void mark_waiting_for(const struct py_waitgraph *g, size_t w,
			     unsigned *mark, unsigned stamp, size_t *queue)
{
	size_t head = 0, tail = 0, k, m, v;
	const size_t *e;

	mark[w] = stamp;
	queue[tail++] = w;
	/* Bounded: each node is queued once. */
	while (head < tail) {
		v = queue[head++];
		e = py_waitgraph_in(g, v, &m);
		for (k = 0; k < m; k++) {
			const struct wg_edge *x = &g->edges[e[k]];

			if (x->kind == WG_WAITS_FOR && !x->any &&
			    mark[x->from] != stamp) {
				mark[x->from] = stamp;
				queue[tail++] = x->from;
			}
		}
		e = py_waitgraph_out(g, v, &m);
		for (k = 0; k < m; k++) {
			const struct wg_edge *x = &g->edges[e[k]];

			if (x->kind == WG_HOLDS && mark[x->to] != stamp) {
				mark[x->to] = stamp;
				queue[tail++] = x->to;
			}
		}
	}
}

/* Does each choice of w's "first of" wait have an edge that leads back
 * to it (marked)?  A choice without a node may end the wait. */
static int all_lead_back(const struct py_waitgraph *g, size_t w,
			 const unsigned *mark, unsigned stamp)
{
	size_t k, m, edges = 0;
	unsigned choices = 0;
	const size_t *e = py_waitgraph_out(g, w, &m);

	for (k = 0; k < m; k++) {
		const struct wg_edge *x = &g->edges[e[k]];

		if (!x->any)
			continue;
		if (mark[x->to] != stamp)
			return 0;
		edges++;
		if (x->any > choices)
			choices = x->any;
	}
	return edges >= choices;
}

void wg_any_blocked(struct py_waitgraph *g)
{
	unsigned *mark = NULL;
	unsigned char *seen = NULL;
	size_t *queue = NULL, i;
	unsigned stamp = 0;

	for (i = 0; i < g->nedges && stamp < ANY_WAITERS_MAX; i++) {
		size_t w = g->edges[i].from;

		if (!g->edges[i].any || (seen && seen[w]))
			continue;
		if (!seen) {
			g->any_blocked = xcalloc(g->nnodes + 1, 1);
			seen = xcalloc(g->nnodes + 1, 1);
			mark = xcalloc(g->nnodes + 1, sizeof(*mark));
			queue = xcalloc(g->nnodes + 1, sizeof(*queue));
		}
		seen[w] = 1;
		mark_waiting_for(g, w, mark, ++stamp, queue);
		g->any_blocked[w] = (unsigned char)all_lead_back(g, w, mark,
								 stamp);
	}
	free(seen);
	free(mark);
	free(queue);
}

int wg_any_counts(const struct py_waitgraph *g, const struct wg_edge *e)
{
	return !e->any || (g->any_blocked && g->any_blocked[e->from]);
}

/* Does task index `from` wait for task index `to` through a "first of"
 * wait that does not count in cycles? */
static int loose_link(const struct py_waitgraph *g, size_t from, size_t to)
{
	long a = py_waitgraph_node_of(g, WG_TASK, from);
	long b = py_waitgraph_node_of(g, WG_TASK, to);
	const size_t *e;
	size_t k, m;

	if (a < 0 || b < 0)
		return 0;
	e = py_waitgraph_out(g, (size_t)a, &m);
	for (k = 0; k < m; k++) {
		const struct wg_edge *x = &g->edges[e[k]];

		if (x->kind == WG_WAITS_FOR && x->to == (size_t)b)
			return !wg_any_counts(g, x);
	}
	return 0;
}

void py_waitgraph_keep_await_cycles(const struct py_waitgraph *g,
				    struct py_async *a)
{
	size_t i, k, kept = 0;

	for (i = 0; i < a->ncycles; i++) {
		size_t n = a->cycle_len[i];
		int loose = 0;

		for (k = 0; k < n && !loose; k++) {
			const struct py_task *x = py_async_task(a, a->cycles[i][k]);
			const struct py_task *y = py_async_task(a,
						a->cycles[i][(k + 1) % n]);

			loose = x && y && loose_link(g, (size_t)(x - a->tasks),
						     (size_t)(y - a->tasks));
		}
		if (loose) {
			free(a->cycles[i]);
			continue;
		}
		a->cycles[kept] = a->cycles[i];
		a->cycle_len[kept] = a->cycle_len[i];
		kept++;
	}
	a->ncycles = kept;
}
