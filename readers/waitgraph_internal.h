/*
 * Between the two halves of the wait-for graph: readers/waitgraph.c
 * builds it, readers/waitgraph_query.c keeps it (storage, indexes,
 * cycles) and answers the queries of readers/waitgraph.h.
 */
#ifndef COROSCOPE_READERS_WAITGRAPH_INTERNAL_H
#define COROSCOPE_READERS_WAITGRAPH_INTERNAL_H

#include "readers/waitgraph.h"

/* Once every node and edge is in: index the edges by their ends and
 * find the cycles. */
void wg_finish(struct py_waitgraph *g);

#endif
