/*
 * Unit tests for the wait-for graph's node index (readers/
 * waitgraph_query.c): py_waitgraph_node_of() answers for every kind, the
 * first node of a (kind, index) when there are two, -1 for none; a
 * report asks it once per task, so it must not scan the nodes.  And
 * py_waitgraph_worker(): the thread a task's wait leads to.
 */
#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

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

static void edge(struct py_waitgraph *g, size_t from, size_t to)
{
	struct wg_edge *e;

	g->edges = realloc(g->edges, (g->nedges + 1) * sizeof(*g->edges));
	CHECK(g->edges != NULL, "room for an edge");
	e = &g->edges[g->nedges++];
	memset(e, 0, sizeof(*e));
	e->kind = WG_WAITS_FOR;
	e->from = from;
	e->to = to;
}

/* A task waiting for a thread directly (anyio's to_thread), through two
 * concurrent futures (wrap_future of an executor's job), on an Event (no
 * worker), and through a loop of futures (bounded: none). */
static void worker(void)
{
	static const enum py_prim_kind kinds[] = {
		PY_PRIM_CFUTURE, PY_PRIM_CFUTURE, PY_PRIM_EVENT,
		PY_PRIM_CFUTURE, PY_PRIM_CFUTURE,
	};
	struct py_waitgraph g;
	size_t i;

	py_waitgraph_init(&g);
	add(&g, WG_THREAD, 0);                  /* 0 */
	for (i = 0; i < 4; i++)
		add(&g, WG_TASK, i);            /* 1 .. 4 */
	g.prims = calloc(5, sizeof(*g.prims));
	CHECK(g.prims != NULL, "room for the objects");
	for (i = 0; i < 5; i++) {
		g.prims[i].kind = kinds[i];
		add(&g, WG_OBJECT, i);          /* 5 .. 9 */
	}
	g.nprims = 5;
	edge(&g, 1, 0);
	edge(&g, 2, 5);
	edge(&g, 5, 6);
	edge(&g, 6, 0);
	edge(&g, 3, 7);
	edge(&g, 4, 8);
	edge(&g, 8, 9);
	edge(&g, 9, 8);
	wg_finish(&g);
	CHECK(py_waitgraph_worker(&g, 1) == 0, "directly");
	CHECK(py_waitgraph_worker(&g, 2) == 0, "through two futures");
	CHECK(py_waitgraph_worker(&g, 3) == -1, "an Event has no worker");
	CHECK(py_waitgraph_worker(&g, 4) == -1, "a loop of futures: none");
	CHECK(py_waitgraph_worker(&g, 0) == -1, "a thread waits for none");
	py_waitgraph_release(&g);
}

int main(void)
{
	kinds_apart();
	many(3000);
	worker();
	return CHECK_DONE("test_waitgraph_index");
}
