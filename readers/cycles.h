/*
 * Cycle search on plain data: a directed graph of nodes 0 .. n-1 given as
 * an adjacency list of integers, and every cycle in it named by one
 * concrete path.  The await graph of asyncio tasks (readers/tasks.c) is
 * its one user; it knows nothing of targets, so it is unit-tested alone.
 *
 * The graph is in compressed form: the out-edges of node u are
 * to[first[u]] .. to[first[u + 1] - 1], in the order the caller wants
 * them tried (the path named for a cycle follows the first edge that stays
 * inside it).  first has n + 1 entries.
 *
 * The search is iterative (Tarjan's strongly connected components with an
 * explicit stack): a chain of 10^6 nodes needs no deep recursion.
 */
#ifndef COROSCOPE_READERS_CYCLES_H
#define COROSCOPE_READERS_CYCLES_H

#include <stddef.h>

struct cycle_graph {
	size_t n;              /* nodes */
	const size_t *first;   /* n + 1 edge indexes */
	const size_t *to;      /* first[n] target nodes, each < n */
};

/*
 * One cycle per strongly connected component of two or more nodes, or of
 * one node with an edge to itself: cycles[i] holds len[i] node indexes,
 * each with an edge to the next and the last with one back to the first.
 * Components come in the order the search completes them.
 */
struct cycle_list {
	size_t **cycles;
	size_t *len;
	size_t n;
	size_t alloc;
};

void cycle_list_init(struct cycle_list *l);
void cycle_list_release(struct cycle_list *l);

/* Append the cycles of g to out.  Edges to a node >= g->n are a bug. */
void cycles_find(const struct cycle_graph *g, struct cycle_list *out);

#endif
