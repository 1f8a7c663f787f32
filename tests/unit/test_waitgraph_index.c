/*
 * Unit tests for the wait-for graph's node index (readers/
 * waitgraph_query.c): py_waitgraph_node_of() answers for every kind, the
 * first node of a (kind, index) when there are two, -1 for none; a
 * report asks it once per task, so it must not scan the nodes.
 */
#include "readers/waitgraph.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/check.h"

static void add(struct py_waitgraph *g, enum wg_kind kind, size_t index)
{
	CHECK(py_waitgraph_add_node(g, kind, index) == g->nnodes - 1,
	      "the new node's index");
}

static void kinds_apart(void)
{
	struct py_waitgraph g;

	py_waitgraph_init(&g);
	add(&g, WG_THREAD, 0);
	add(&g, WG_TASK, 0);
	add(&g, WG_OBJECT, 0);
	add(&g, WG_TASK, 7);
	add(&g, WG_TASK, 7);          /* a second node: the first counts */
	CHECK(py_waitgraph_node_of(&g, WG_THREAD, 0) == 0, "thread 0");
	CHECK(py_waitgraph_node_of(&g, WG_TASK, 0) == 1, "task 0");
	CHECK(py_waitgraph_node_of(&g, WG_OBJECT, 0) == 2, "object 0");
	CHECK(py_waitgraph_node_of(&g, WG_TASK, 7) == 3, "first of two");
	CHECK(py_waitgraph_node_of(&g, WG_THREAD, 7) == -1, "no thread 7");
	CHECK(py_waitgraph_node_of(&g, WG_TASK, 8) == -1, "no task 8");
	py_waitgraph_release(&g);
	CHECK(py_waitgraph_node_of(&g, WG_TASK, 0) == -1, "released");
}

/* Against the definition (the first node with that kind and index), on
 * many nodes in a shuffled order. */
static void many(size_t n)
{
	struct py_waitgraph g;
	size_t i, bad = 0;

	py_waitgraph_init(&g);
	srand(1);
	for (i = 0; i < n; i++)
		add(&g, (enum wg_kind)(rand() % 3), (size_t)rand() % (n / 2));
	for (i = 0; i < n; i++) {
		enum wg_kind kind = (enum wg_kind)(i % 3);
		size_t index = i / 3, k;
		long want = -1;

		for (k = 0; k < g.nnodes && want < 0; k++)
			if (g.nodes[k].kind == kind && g.nodes[k].index == index)
				want = (long)k;
		bad += py_waitgraph_node_of(&g, kind, index) != want;
	}
	CHECK(bad == 0, "%zu of %zu lookups differ from a scan", bad, n);
	py_waitgraph_release(&g);
}

int main(void)
{
	kinds_apart();
	many(3000);
	return CHECK_DONE("test_waitgraph_index");
}
