/*
 * Between readers/primitives.c (the standard library's primitives, the
 * futures), readers/primitives_types.c (their classes) and readers/primitives_libs.c (trio's,
 * anyio's, tornado's and importlib's) and readers/primitives_gevent.c:
 * how a primitive's fields are read.
 */
#ifndef COROSCOPE_READERS_PRIMITIVES_INTERNAL_H
#define COROSCOPE_READERS_PRIMITIVES_INTERNAL_H

#include <stdint.h>

#include "readers/primitives.h"

/* An instance attribute, from its __dict__ or its slot (trio's attrs
 * classes have slots); 0 where absent, unset or unreadable. */
uint64_t prim_attr(struct pyproc *py, uint64_t obj, const char *name);
/* obj.a.b, as prim_attr() */
uint64_t prim_attr2(struct pyproc *py, uint64_t obj, const char *a,
		    const char *b);
/* True 1, False 0, anything else -1. */
int prim_bool(struct pyproc *py, uint64_t v);
/* An int's value, -1 where it is none or unreadable. */
int64_t prim_int(struct pyproc *py, uint64_t v);
/* len() of a list, tuple or deque, a set or a dict; None is empty;
 * anything else -1. */
int64_t prim_len(struct pyproc *py, const struct py_prim_types *t, uint64_t v);
/* prim_len() and prim_int() of obj's attribute `name` */
int64_t prim_len_attr(struct pyproc *py, const struct py_prim_types *t,
		      uint64_t obj, const char *name);
int64_t prim_int_attr(struct pyproc *py, uint64_t obj, const char *name);
/* A queue's getters and putters (waiters) and the threads or tasks in
 * its join() (joiners, -1 unknown: as none). */
int64_t prim_plus_joiners(int64_t waiters, int64_t joiners);
/*
 * The object's own class where its type is a subclass of row i's class
 * of t (a PriorityQueue, a user's Thread): "module.Name" from its
 * __module__ and __name__, NULL for row i's class itself, a class the
 * row's name already names, or one whose names cannot be read.  Cached
 * by type for py's life (readers/prim_class.c).
 */
const char *prim_own_class(struct pyproc *py, const struct py_prim_types *t,
			   size_t i, uint64_t type);
/* a + b, -1 when either is unknown */
int64_t prim_sum(int64_t a, int64_t b);

/* The state of a primitive of trio's, anyio's or tornado's (p's kind,
 * family and address set, the state all unknown). */
void prim_read_trio_state(struct pyproc *py, const struct py_prim_types *t,
			  struct py_prim *p);
void prim_read_anyio_state(struct pyproc *py, const struct py_prim_types *t,
			   struct py_prim *p);
/* importlib's _ModuleLock: the ident of the thread importing (None
 * when free), how often it entered, and the threads waiting. */
void prim_read_import_lock_state(struct pyproc *py,
				 const struct py_prim_types *t,
				 struct py_prim *p);
void prim_read_tornado_state(struct pyproc *py,
			     const struct py_prim_types *t, struct py_prim *p);
void prim_read_gevent_state(struct pyproc *py, const struct py_prim_types *t,
			    struct py_prim *p);
void prim_read_aiohttp_state(struct pyproc *py, const struct py_prim_types *t,
			     struct py_prim *p);
/* gevent's layout for the release the target runs (t's classes
 * loaded), or NULL. */
const struct gevent_layout *prim_gevent_layout(struct pyproc *py,
					       const struct py_prim_types *t);
/* Up to max items of v when it is a collections.deque; how many. */
size_t prim_deque_items(struct pyproc *py, const struct py_prim_types *t,
			uint64_t v, uint64_t *out, size_t max);

#endif
