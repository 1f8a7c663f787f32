/*
 * A second thread walking one long GC list backwards from its tail while
 * the walk in readers/gc.c goes on forwards (for readers/gc.c only).
 *
 * A walk of a big heap mostly waits for memory: each object's header is
 * where the previous one pointed, so one walk waits for one header at a
 * time (~50 ns each for 100,000 objects in a 30 MB copy).  Two walks from
 * the two ends wait for two at once.
 *
 * The tail walker records each object (its header's address and its
 * type); the forward walk visits its own as it goes.  Each publishes now
 * and then the last node it had, and checks its nodes against the last
 * few the other published.  The forward walk stops at the first node it
 * meets (gc_tail_met()): the objects before it are its own, it and the
 * rest are the tail walker's.  The tail walker stops at the first node
 * the forward walk had (or at the stop gc_tail_finish() gives); once it
 * has stopped, the forward walk's next node is in its records, or the
 * forward walk has still to reach the last of them.  Either walker may
 * lose its CPU for a while: crossing without meeting costs only time (a
 * forward walk that reaches the head has seen every object, and the
 * records are dropped).
 *
 * The tail walker checks what the forward walk checks, mirrored (each
 * node's next pointer leads back where it came from), and stops at the
 * first node that fails: there the forward walk, reaching it, finds the
 * same fault.  So the objects, their order and the errors are the
 * forward walk's alone, whatever the timing.
 */
#ifndef COROSCOPE_READERS_GC_TAIL_H
#define COROSCOPE_READERS_GC_TAIL_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"
#include "common/le.h"
#include "readers/layout.h"

/* Low bits of _gc_next/_gc_prev carry flags from 3.8 on (two on prev);
 * objects are 16-byte aligned, so masking three bits loses nothing. */
#define GC_PTR_MASK (~(uint64_t)7)

struct gc_tail;

/* What both walkers use of a node: its links (flag bits still in) and
 * its object's type. */
struct gc_node {
	uint64_t next, prev, type;
};

/*
 * Where a node's three words lie, worked out once per walk: a walk reads
 * a hundred thousand nodes, and working the offsets out for each, with
 * a copy buffer it rarely needs, was half of the ~60 instructions a
 * node took.  fast: all three lie in the n bytes read (negative offsets
 * made huge fail that one test).
 */
struct gc_node_at {
	size_t n, next, prev, type;
	int fast;
};

void gc_node_at_init(struct gc_node_at *at, const struct py_layout *L);

/*
 * The PyGC_Head at node, then the object's refcount and type (the
 * L->gc_head_size + 16 bytes both walkers read of each object), decoded
 * into *out through a copy when its page was not read just before.  0
 * or a negative status.  Walkers call gc_read_node_fast().
 */
int gc_read_node(struct memsrc *ms, const struct py_layout *L,
		 const struct gc_node_at *at, uint64_t node,
		 struct gc_node *out, struct cs_err *err);

/* gc_read_node(), decoding in place a node whose page was read just
 * before (most nodes), without a call. */
static inline int gc_read_node_fast(struct memsrc *ms,
				    const struct py_layout *L,
				    const struct gc_node_at *at,
				    uint64_t node, struct gc_node *out,
				    struct cs_err *err)
{
	const uint8_t *p = at->fast ? memsrc_peek(ms, node, at->n) : NULL;

	if (!p)
		return gc_read_node(ms, L, at, node, out, err);
	out->next = le_u64(p + at->next);
	out->prev = le_u64(p + at->prev);
	out->type = le_u64(p + at->type);
	return 0;
}

/* One object the tail walker found: its PyGC_Head and its type. */
struct gc_rec {
	uint64_t node, type;
};

/*
 * Start walking backwards from tail, the last node of the list whose
 * head is head, on a thread reading ms as memsrc thread 1 (the caller
 * shares ms meanwhile), recording at most max objects (as many as the
 * memory they can be in holds).  NULL when no thread starts.
 */
struct gc_tail *gc_tail_start(struct memsrc *ms, const struct py_layout *L,
			      uint64_t head, uint64_t tail, size_t max);
/*
 * Is node (a valid header the forward walk reached, after last, the one
 * it visited before) one the tail walker recorded?  Cheap: called for
 * every node.
 */
int gc_tail_met(struct gc_tail *t, uint64_t node, uint64_t last);
/*
 * Stop and free t.  met is the node the forward walk met, 0 when it
 * went to the head (or stopped).  *recs gets the objects from met on, in
 * the list's order (*n of them; the caller frees *recs), or NULL.
 */
void gc_tail_finish(struct gc_tail *t, uint64_t met, struct gc_rec **recs,
		    size_t *n);

#endif
