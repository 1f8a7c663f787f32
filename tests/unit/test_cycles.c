/*
 * Unit tests for readers/cycles.c: cycle search on a plain adjacency
 * list, the await graph's shape without a target.
 */
#include "readers/cycles.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"

/* A graph built from an edge list (from, to pairs, in try order). */
struct graph {
	struct cycle_graph g;
	size_t *first, *to;
};

static void graph_build(struct graph *gr, size_t n, const size_t *edges,
			size_t nedges)
{
	size_t i, *fill;

	gr->first = xcalloc(n + 1, sizeof(*gr->first));
	gr->to = xmalloc((nedges ? nedges : 1) * sizeof(*gr->to));
	fill = xcalloc(n + 1, sizeof(*fill));
	for (i = 0; i < nedges; i++)
		gr->first[edges[2 * i] + 1]++;
	for (i = 0; i < n; i++)
		gr->first[i + 1] += gr->first[i];
	for (i = 0; i < nedges; i++) {
		size_t u = edges[2 * i];

		gr->to[gr->first[u] + fill[u]++] = edges[2 * i + 1];
	}
	free(fill);
	gr->g.n = n;
	gr->g.first = gr->first;
	gr->g.to = gr->to;
}

static void graph_free(struct graph *gr)
{
	free(gr->first);
	free(gr->to);
}

/* Cycles of a graph given by its edges. */
static void find(size_t n, const size_t *edges, size_t nedges,
		 struct cycle_list *out)
{
	struct graph gr;

	graph_build(&gr, n, edges, nedges);
	cycle_list_init(out);
	cycles_find(&gr.g, out);
	graph_free(&gr);
}

/* Is path a real cycle of the graph (each node has an edge to the next,
 * the last to the first, no node twice)? */
static int is_cycle(const size_t *edges, size_t nedges, const size_t *path,
		    size_t len)
{
	size_t i, j, k;

	for (i = 0; i < len; i++) {
		size_t u = path[i], v = path[(i + 1) % len];
		int found = 0;

		for (k = 0; k < nedges && !found; k++)
			found = edges[2 * k] == u && edges[2 * k + 1] == v;
		if (!found)
			return 0;
		for (j = 0; j < i; j++)
			if (path[j] == u)
				return 0;
	}
	return len > 0;
}

static void test_no_cycle(void)
{
	/* a diamond: 0 -> 1 -> 3, 0 -> 2 -> 3 */
	static const size_t e[] = { 0, 1, 0, 2, 1, 3, 2, 3 };
	struct cycle_list l;

	find(4, e, 4, &l);
	CHECK(l.n == 0, "diamond: %zu cycles, want 0", l.n);
	cycle_list_release(&l);
	find(0, NULL, 0, &l);
	CHECK(l.n == 0, "empty graph: %zu cycles", l.n);
	cycle_list_release(&l);
}

static void test_self_loop(void)
{
	static const size_t e[] = { 0, 1, 1, 1, 1, 2 };
	struct cycle_list l;

	find(3, e, 3, &l);
	CHECK(l.n == 1, "self loop: %zu cycles, want 1", l.n);
	if (l.n == 1)
		CHECK(l.len[0] == 1 && l.cycles[0][0] == 1,
		      "self loop: len %zu first %zu", l.len[0], l.cycles[0][0]);
	cycle_list_release(&l);
}

static void test_two_cycle(void)
{
	static const size_t e[] = { 2, 0, 0, 1, 1, 0 };
	struct cycle_list l;

	find(3, e, 3, &l);
	CHECK(l.n == 1, "2-cycle: %zu cycles, want 1", l.n);
	if (l.n == 1)
		CHECK(l.len[0] == 2 && is_cycle(e, 3, l.cycles[0], l.len[0]),
		      "2-cycle: len %zu", l.len[0]);
	cycle_list_release(&l);
}

static void test_two_disjoint(void)
{
	/* 0 -> 1 -> 2 -> 0 and 3 -> 4 -> 3, joined by 2 -> 3 one way */
	static const size_t e[] = { 0, 1, 1, 2, 2, 0, 2, 3, 3, 4, 4, 3 };
	struct cycle_list l;
	size_t i, lens = 0;

	find(5, e, 6, &l);
	CHECK(l.n == 2, "two cycles: %zu found", l.n);
	for (i = 0; i < l.n; i++) {
		CHECK(is_cycle(e, 6, l.cycles[i], l.len[i]),
		      "two cycles: cycle %zu is not one", i);
		lens += l.len[i];
	}
	CHECK(lens == 5, "two cycles: lengths add up to %zu, want 5", lens);
	cycle_list_release(&l);
}

static void test_dead_end(void)
{
	/* One component where the first edge at every step leads into a
	 * dead end (2 only goes back to 1): the named path must back up
	 * and still be a real cycle through 0. */
	static const size_t e[] = { 0, 1, 1, 2, 1, 3, 2, 1, 3, 0 };
	struct cycle_list l;

	find(4, e, 5, &l);
	CHECK(l.n == 1, "dead end: %zu cycles, want 1", l.n);
	if (l.n == 1)
		CHECK(is_cycle(e, 5, l.cycles[0], l.len[0]) && l.len[0] == 3,
		      "dead end: named path of %zu is not a cycle", l.len[0]);
	cycle_list_release(&l);
}

static void test_edgeless_nodes(void)
{
	/* Nodes 0, 2, 4 and 6 have no edge (2 and 6 are reached from a
	 * cycle, 0 and 4 from nothing); the cycles 1 -> 3 -> 1 and
	 * 5 -> 5 are still found, in the order of their first nodes. */
	static const size_t e[] = { 1, 3, 3, 1, 3, 2, 5, 5, 5, 6 };
	struct cycle_list l;

	find(7, e, 5, &l);
	CHECK(l.n == 2, "edgeless nodes: %zu cycles, want 2", l.n);
	if (l.n == 2) {
		CHECK(l.len[0] == 2 && l.cycles[0][0] == 1 &&
		      is_cycle(e, 5, l.cycles[0], l.len[0]),
		      "edgeless nodes: first cycle of %zu from %zu", l.len[0],
		      l.cycles[0][0]);
		CHECK(l.len[1] == 1 && l.cycles[1][0] == 5,
		      "edgeless nodes: second cycle of %zu from %zu",
		      l.len[1], l.cycles[1][0]);
	}
	cycle_list_release(&l);
	/* nodes and no edge at all */
	find(1000, NULL, 0, &l);
	CHECK(l.n == 0, "1000 nodes, no edge: %zu cycles", l.n);
	cycle_list_release(&l);
}

/* A chain of n nodes, closed into one cycle when `closed`: deep enough
 * that a recursive search would overflow the stack. */
static void test_long_chain(size_t n, int closed)
{
	size_t *e = xmalloc(2 * n * sizeof(*e)), i, ne = 0, ok = 1;
	struct graph gr;
	struct cycle_list l;

	for (i = 0; i + 1 < n; i++, ne++) {
		e[2 * ne] = i;
		e[2 * ne + 1] = i + 1;
	}
	if (closed) {
		e[2 * ne] = n - 1;
		e[2 * ne + 1] = 0;
		ne++;
	}
	graph_build(&gr, n, e, ne);
	cycle_list_init(&l);
	cycles_find(&gr.g, &l);
	if (!closed) {
		CHECK(l.n == 0, "open chain of %zu: %zu cycles", n, l.n);
	} else {
		CHECK(l.n == 1 && l.len[0] == n, "closed chain of %zu: %zu cycles",
		      n, l.n);
		for (i = 0; l.n == 1 && l.len[0] == n && i < n; i++)
			ok &= l.cycles[0][i] == i;
		CHECK(ok, "closed chain of %zu: not in edge order", n);
	}
	cycle_list_release(&l);
	graph_free(&gr);
	free(e);
}

static void test_many_self_loops(size_t n)
{
	size_t *e = xmalloc(2 * n * sizeof(*e)), i;
	struct cycle_list l;

	for (i = 0; i < n; i++)
		e[2 * i] = e[2 * i + 1] = i;
	find(n, e, n, &l);
	CHECK(l.n == n, "%zu self loops: %zu cycles", n, l.n);
	cycle_list_release(&l);
	free(e);
}

int main(void)
{
	test_no_cycle();
	test_self_loop();
	test_two_cycle();
	test_two_disjoint();
	test_dead_end();
	test_edgeless_nodes();
	test_long_chain(100000, 0);
	test_long_chain(100000, 1);
	test_many_self_loops(100000);
	return CHECK_DONE("test_cycles");
}
