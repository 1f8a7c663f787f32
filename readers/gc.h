/*
 * Walking the cyclic garbage collector's object lists: the out-of-process
 * form of gc.get_objects().  Every generator, coroutine, async generator,
 * task and future is GC-tracked, so this walk finds all of them.
 */
#ifndef COROSCOPE_READERS_GC_H
#define COROSCOPE_READERS_GC_H

#include <stdint.h>

#include "readers/pyproc.h"

/* At most this many objects are visited: a bound, not a limit anyone
 * should reach (a 24 GiB heap holds fewer GC objects). */
#define PY_GC_MAX_OBJECTS (200u * 1000 * 1000)

/*
 * Called with each object's address and type, and the interpreter whose
 * heap holds it (0 before 3.9, where one collector serves every
 * interpreter); non-zero stops the walk.
 */
typedef int (*py_gc_visitor)(uint64_t obj, uint64_t type, uint64_t interp,
			     void *data);

/*
 * Visit every object in every generation (and the permanent generation)
 * of every interpreter.  Errors: CS_ERR_MEMORY when a list cannot be
 * followed (a running target mutates the lists: stop it first).
 */
int py_gc_walk(struct pyproc *py, py_gc_visitor visit, void *data,
	       struct cs_err *err);

/* One visitor of a shared walk. */
struct py_gc_visit {
	py_gc_visitor fn;
	void *data;
};

/* Visitors one walk serves at most. */
#define PY_GC_MAX_VISITS 8

/*
 * One walk for several readers (generators and tasks, greenlets, trio
 * tasks): every object goes to each of the n visitors in turn.  A
 * visitor that returns non-zero is not called again; the walk stops when
 * none is left.  Errors as py_gc_walk(); more than PY_GC_MAX_VISITS
 * visitors is a bug.
 */
int py_gc_walk_each(struct pyproc *py, const struct py_gc_visit *v, size_t n,
		    struct cs_err *err);

#endif
