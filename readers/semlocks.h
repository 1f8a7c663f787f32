/*
 * multiprocessing's locks and semaphores: multiprocessing.synchronize's
 * Lock, RLock, Semaphore and BoundedSemaphore, each a Python object
 * around the _multiprocessing module's SemLock, a POSIX semaphore that
 * the processes share (a fork keeps it at the same address; a spawned
 * child opens it by name, at an address of its own).  The semaphore says
 * only how many units are left; each process's SemLock keeps what that
 * process did with it: the times its threads acquired it less the times
 * they released it (count: > 0 for a Lock or RLock it holds), and the
 * ident of the thread that acquired it last (the holder's, while count >
 * 0).  No Python attribute shows either (readers/layout.h, semlock_*).
 * Found by the heap walk, wherever the program keeps them, by exact
 * class.
 *
 * Around a shared heap walk:
 *	if (py_semlocks_prepare(py, &scan, &visit[n])) n++;
 *	py_gc_walk_each(py, visit, n, &err);
 *	py_semlocks_finish(py, &scan, &async);   reads them into async
 *	py_semlocks_scan_release(&scan);
 */
#ifndef COROSCOPE_READERS_SEMLOCKS_H
#define COROSCOPE_READERS_SEMLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "readers/gc.h"
#include "readers/pyproc.h"
#include "readers/tasks.h"

/* Objects kept at most: beyond, the rest are not read (a->semlocks_cut). */
#define PY_MAX_SEMLOCKS 65536

#define PY_SEMLOCK_TYPES 4

struct py_semlock_scan {
	uint64_t types[PY_SEMLOCK_TYPES];   /* exact classes looked for */
	const char *names[PY_SEMLOCK_TYPES];
	int owned[PY_SEMLOCK_TYPES];        /* a Lock's or RLock's class */
	size_t ntypes;
	uint64_t *found;                    /* objects of those classes */
	size_t n, alloc;
	int cut;
};

/* 1 with *visit set when multiprocessing.synchronize is loaded and the
 * layout knows SemLock's fields, else 0. */
int py_semlocks_prepare(struct pyproc *py, struct py_semlock_scan *s,
			struct py_gc_visit *visit);
/* After the walk: each object found read into a->semlocks (a owns them),
 * those whose SemLock cannot be read left out. */
void py_semlocks_finish(struct pyproc *py, struct py_semlock_scan *s,
			struct py_async *a);
void py_semlocks_scan_release(struct py_semlock_scan *s);

#endif
