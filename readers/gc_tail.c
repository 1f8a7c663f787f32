#include "readers/gc_tail.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobs.h"
#include "common/error.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "readers/fields.h"
#include "readers/gc.h"
#include "common/banned.h"

/*
 * Nodes either walker goes between two looks at what the other published
 * (and between two publications of its own): each look may move a cache
 * line from the other core.
 */
#define TAIL_PUBLISH 64
/*
 * Publications each walker keeps.  The two can pass each other between
 * two looks; then the newest is behind, but an older one kept is ahead,
 * within a few looks (while both move; one that stopped is caught by
 * `done`).
 */
#define TAIL_RING 8

struct ring {
	uint64_t v[TAIL_RING];
	unsigned next;
};

static void ring_push(struct ring *r, uint64_t node)
{
	if (node && node != r->v[(r->next + TAIL_RING - 1) % TAIL_RING]) {
		r->v[r->next] = node;
		r->next = (r->next + 1) % TAIL_RING;
	}
}

static int ring_has(const struct ring *r, uint64_t node)
{
	unsigned i;

	for (i = 0; i < TAIL_RING; i++)
		if (r->v[i] == node)
			return 1;
	return 0;
}

/* The four groups of fields each on cache lines of their own: the
 * forward walk's change at every node, the tail walker's records at
 * every object. */
#define LINE 64

struct gc_tail {
	_Alignas(LINE) struct memsrc *ms;
	const struct py_layout *L;
	uint64_t head, tail;
	size_t max;
	struct cs_job *job;
	/* Between the two. */
	_Alignas(LINE) _Atomic uint64_t front;   /* the tail walker's last
						    published node, 0: none */
	_Atomic uint64_t forward; /* the forward walk's last published */
	_Atomic int stop;         /* set by gc_tail_finish() */
	_Atomic int done;         /* the tail walker ended: recs are final */
	/* The tail walker's; the forward walk reads them once done. */
	_Alignas(LINE) struct gc_rec *recs;
	size_t n, alloc;
	struct ring seen;         /* the forward walk's publications */
	/* The forward walk's. */
	_Alignas(LINE) struct ring met;  /* the tail walker's publications */
	unsigned looks;
	int settled;              /* it saw `done` and searched recs */
};

void gc_node_at_init(struct gc_node_at *at, const struct py_layout *L)
{
	at->n = (size_t)L->gc_head_size + 16;
	at->next = (size_t)(unsigned)L->gc_head_next;
	at->prev = (size_t)(unsigned)L->gc_head_prev;
	at->type = (size_t)(unsigned)(L->gc_head_size + L->ob_type);
	at->fast = (at->next | at->prev | at->type) <= at->n - 8 &&
		   at->n <= PY_LAYOUT_MAX_STRUCT;
}

int gc_read_node(struct memsrc *ms, const struct py_layout *L,
		 const struct gc_node_at *at, uint64_t node,
		 struct gc_node *out, struct cs_err *err)
{
	const uint8_t *p = memsrc_peek(ms, node, at->n);
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	int ret;

	if (at->n > sizeof(buf))
		CS_BUG("PyGC_Head of %d bytes", L->gc_head_size);
	if (!p) {
		ret = memsrc_read(ms, node, buf, at->n, err);
		if (ret < 0)
			return ret;
		p = buf;
	}
	if (at->fast) {
		out->next = le_u64(p + at->next);
		out->prev = le_u64(p + at->prev);
		out->type = le_u64(p + at->type);
	} else {
		/* A table without one of them: field_u64() reads it as 0. */
		out->next = field_u64(p, at->n, L->gc_head_next);
		out->prev = field_u64(p, at->n, L->gc_head_prev);
		out->type = field_u64(p, at->n, L->gc_head_size + L->ob_type);
	}
	return 0;
}

/*
 * Walk back from the tail, recording, until the node the forward walk
 * published (visited: not recorded), the head, a node that fails the
 * check, or the stop.
 */
static void *tail_run(void *arg)
{
	struct gc_tail *t = arg;
	const struct py_layout *L = t->L;
	uint64_t node = t->tail, from = t->head;
	struct gc_node_at at;
	struct gc_node nd;
	struct cs_err err;

	memsrc_thread(1);
	cs_err_init(&err);
	gc_node_at_init(&at, L);
	/* Bounded by t->max records. */
	while (node && node != t->head && t->n < t->max) {
		if (t->n % TAIL_PUBLISH == 0) {
			if (atomic_load_explicit(&t->stop,
						 memory_order_relaxed))
				break;
			ring_push(&t->seen,
				  atomic_load_explicit(&t->forward,
						       memory_order_relaxed));
		}
		if (ring_has(&t->seen, node))
			break;
		if (gc_read_node_fast(t->ms, L, &at, node, &nd, &err) < 0)
			break;
		if ((nd.next & GC_PTR_MASK) != from)
			break;
		t->recs = xgrow(t->recs, &t->alloc, t->n + 1, sizeof(*t->recs));
		t->recs[t->n].node = node;
		t->recs[t->n].type = nd.type;
		if (++t->n % TAIL_PUBLISH == 0)
			atomic_store_explicit(&t->front, node,
					      memory_order_relaxed);
		from = node;
		node = nd.prev & GC_PTR_MASK;
	}
	if (t->n)
		atomic_store_explicit(&t->front, t->recs[t->n - 1].node,
				      memory_order_relaxed);
	atomic_store_explicit(&t->done, 1, memory_order_release);
	return NULL;
}

struct gc_tail *gc_tail_start(struct memsrc *ms, const struct py_layout *L,
			      uint64_t head, uint64_t tail, size_t max)
{
	struct gc_tail *t = aligned_alloc(LINE, sizeof(*t));

	if (!t)
		xdie_out_of_memory();
	memset(t, 0, sizeof(*t));
	t->ms = ms;
	t->L = L;
	t->head = head;
	t->tail = tail;
	t->max = max < PY_GC_MAX_OBJECTS ? max : PY_GC_MAX_OBJECTS;
	atomic_init(&t->front, 0);
	atomic_init(&t->forward, 0);
	atomic_init(&t->stop, 0);
	atomic_init(&t->done, 0);
	if (cs_job_start(&t->job, tail_run, t, 0) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* Where node is in t's records (searched from their end, where the
 * walkers meet), or -1. */
static long rec_index(const struct gc_tail *t, uint64_t node)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (t->recs[i].node == node)
			return (long)i;
	return -1;
}

int gc_tail_met(struct gc_tail *t, uint64_t node, uint64_t last)
{
	if (++t->looks % TAIL_PUBLISH == 0) {
		atomic_store_explicit(&t->forward, last, memory_order_relaxed);
		if (!t->settled &&
		    atomic_load_explicit(&t->done, memory_order_acquire)) {
			/* It stopped, maybe at a node this walk had passed:
			 * then what follows it is in its records.  Else this
			 * walk has still to reach its last node, and meets
			 * that. */
			t->settled = 1;
			if (rec_index(t, node) >= 0)
				return 1;
		}
		ring_push(&t->met, atomic_load_explicit(&t->front,
							memory_order_relaxed));
	}
	return ring_has(&t->met, node);
}

void gc_tail_finish(struct gc_tail *t, uint64_t met, struct gc_rec **recs,
		    size_t *n)
{
	long i;
	size_t k;

	atomic_store_explicit(&t->stop, 1, memory_order_relaxed);
	(void)cs_job_join(t->job);
	*recs = NULL;
	*n = 0;
	if (met) {
		i = rec_index(t, met);
		if (i < 0)
			CS_BUG("met node 0x%llx not recorded",
			       (unsigned long long)met);
		/* recs[i] back to recs[0] is the list's order. */
		for (k = 0; k < (size_t)(i + 1) / 2; k++) {
			struct gc_rec r = t->recs[k];

			t->recs[k] = t->recs[(size_t)i - k];
			t->recs[(size_t)i - k] = r;
		}
		*recs = t->recs;
		*n = (size_t)i + 1;
	} else {
		free(t->recs);
	}
	free(t);
}
