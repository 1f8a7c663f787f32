/*
 * Objects whose waiters are known only by the futures they keep:
 * tornado's Lock, Semaphore, BoundedSemaphore, Condition and Queue
 * (and its PriorityQueue and LifoQueue), whose acquire(), wait(), get()
 * and put() are no coroutines but return a future the caller awaits.
 * No frame of tornado's shows such a wait; the object's deque of
 * futures does (py_prim_waiter_futures()).  And gevent's Semaphore,
 * BoundedSemaphore, RLock, Event, AsyncResult and Queue family, whose
 * waits no frame shows either (Cython calls): the object keeps its
 * waiting greenlets (py_prim_waiter_greenlets()).  Found by the heap
 * walk, wherever the program keeps them (a global, an attribute, a
 * local).
 *
 * Around a shared heap walk:
 *	if (py_waitables_prepare(py, &scan, &visit[n])) n++;
 *	py_gc_walk_each(py, visit, n, &err);
 *	py_waitables_finish(&scan, &async);   moves them to async.waitables
 *	py_waitables_scan_release(&scan);
 */
#ifndef COROSCOPE_READERS_WAITABLES_H
#define COROSCOPE_READERS_WAITABLES_H

#include <stddef.h>
#include <stdint.h>

#include "readers/gc.h"
#include "readers/pyproc.h"
#include "readers/tasks.h"

/* Objects kept at most (16 bytes each): beyond, the rest are not looked
 * at, and a->waitables_cut says so. */
#define PY_MAX_WAITABLES 1000000

#define PY_WAITABLE_TYPES 19

struct py_waitables_scan {
	uint64_t types[PY_WAITABLE_TYPES];  /* exact classes looked for */
	int kinds[PY_WAITABLE_TYPES];       /* enum py_prim_kind of each */
	size_t ntypes;
	struct py_waitable *found;
	size_t n, alloc;
	int cut;
};

/* 1 with *visit set when tornado's locks or queues are loaded, else 0. */
int py_waitables_prepare(struct pyproc *py, struct py_waitables_scan *s,
			 struct py_gc_visit *visit);
/* After the walk: what it found becomes a->waitables (a owns it). */
void py_waitables_finish(struct py_waitables_scan *s, struct py_async *a);
void py_waitables_scan_release(struct py_waitables_scan *s);

#endif
