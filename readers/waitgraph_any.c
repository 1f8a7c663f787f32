/*
 * The wait-for graph's "first of" waits (wg_edge.any): a waiter that goes
 * on after the first of several ends is stuck for good only when none of
 * them can end.  Its "any" edges count in the cycle search only when the
 * graph shows that none will (wg_any_blocked()); and an await
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
 * Which nodes may still go on, read off the graph (a reduction: what
 * nothing blocks goes on, and then what waited only for it).  A node
 * goes on once
 * - every plain waits-for edge of its leads to a node that goes on (it
 *   waits for all of them),
 * - one of its "first of" edges does, or it has a choice with no node
 *   (which may end the wait),
 * - and, when it is an object held, one of its holders goes on (a
 *   semaphore's second holder may release it as well as the first).
 * A node with none of these goes on: a wait for an Event nobody is
 * seen to set is no deadlock.  Each node goes on at most once, and
 * each edge is looked at from each end at most once: linear.
 */
struct reduction {
	size_t *plain;           /* plain waits-for edges still blocking */
	unsigned char *any;      /* 1: its "first of" wait still blocks */
	unsigned char *held;     /* 1: its holders still block it */
	unsigned char *goes_on;
	size_t *queue, tail;
};

static void maybe_goes_on(struct reduction *r, size_t v)
{
	if (!r->goes_on[v] && !r->plain[v] && !r->any[v] && !r->held[v]) {
		r->goes_on[v] = 1;
		r->queue[r->tail++] = v;
	}
}

static void reduction_init(const struct py_waitgraph *g, struct reduction *r)
{
	size_t i, n = g->nnodes + 1, *edges = xcalloc(n, sizeof(size_t));
	unsigned *choices = xcalloc(n, sizeof(unsigned));

	r->plain = xcalloc(n, sizeof(*r->plain));
	r->any = xcalloc(n, 1);
	r->held = xcalloc(n, 1);
	r->goes_on = xcalloc(n, 1);
	r->queue = xcalloc(n, sizeof(*r->queue));
	r->tail = 0;
	for (i = 0; i < g->nedges; i++) {
		const struct wg_edge *e = &g->edges[i];

		if (e->kind == WG_HOLDS) {
			r->held[e->to] = 1;
		} else if (!e->any) {
			r->plain[e->from]++;
		} else {
			edges[e->from]++;
			if (e->any > choices[e->from])
				choices[e->from] = e->any;
		}
	}
	/* (a choice without a node may end the wait: it does not block) */
	for (i = 0; i < g->nnodes; i++)
		r->any[i] = edges[i] && edges[i] >= choices[i];
	free(edges);
	free(choices);
}

static void reduction_release(struct reduction *r)
{
	free(r->plain);
	free(r->any);
	free(r->held);
	free(r->queue);
}

void wg_any_blocked(struct py_waitgraph *g)
{
	struct reduction r;
	size_t head = 0, i, k, m, v;
	int has_any = 0;

	for (i = 0; i < g->nedges && !has_any; i++)
		has_any = g->edges[i].any != 0;
	if (!has_any)
		return;
	reduction_init(g, &r);
	for (i = 0; i < g->nnodes; i++)
		maybe_goes_on(&r, i);
	/* Bounded: each node is queued once. */
	while (head < r.tail) {
		const size_t *e;

		v = r.queue[head++];
		e = py_waitgraph_in(g, v, &m);
		for (k = 0; k < m; k++) {
			const struct wg_edge *x = &g->edges[e[k]];

			if (x->kind != WG_WAITS_FOR)
				continue;
			if (x->any)
				r.any[x->from] = 0;
			else if (r.plain[x->from])
				r.plain[x->from]--;
			maybe_goes_on(&r, x->from);
		}
		e = py_waitgraph_out(g, v, &m);
		for (k = 0; k < m; k++) {
			const struct wg_edge *x = &g->edges[e[k]];

			if (x->kind != WG_HOLDS)
				continue;
			r.held[x->to] = 0;
			maybe_goes_on(&r, x->to);
		}
	}
	/* A "first of" waiter that cannot go on: none of its choices will
	 * end its wait, and its edges count in the cycle search. */
	g->any_blocked = r.goes_on;
	for (i = 0; i < g->nnodes; i++)
		g->any_blocked[i] = !r.goes_on[i];
	reduction_release(&r);
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
