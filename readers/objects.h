/*
 * Reading individual CPython objects out of the target: type names,
 * str, bytes, int, float, tuple, list (dict, set and attributes are in
 * readers/dicts.h).
 *
 * Every function copies the remote object into local memory first and
 * checks every length and pointer it finds there; a malformed object is
 * an error (CS_ERR_MEMORY), never a crash or an unbounded loop.
 */
#ifndef COROSCOPE_READERS_OBJECTS_H
#define COROSCOPE_READERS_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "readers/pyproc.h"

/* Upper bounds for anything read from the target. */
/* A str whose data would not fit in a 47-bit user address space is
 * garbage; anything shorter is real, however long (a 2 GiB str is), and
 * readers decode only the first characters they need. */
#define PY_MAX_STR_BYTES (1ull << 47)
#define PY_MAX_CONTAINER (1u << 24)    /* items in a tuple, list, dict, set */

int pyobj_read_type(struct pyproc *py, uint64_t obj, uint64_t *type,
		    struct cs_err *err);

/* tp_name of a type object (cached in py->strs is not needed: short). */
int pytype_name(struct pyproc *py, uint64_t type, struct strbuf *out,
		struct cs_err *err);

/* Is `type` the type `base` or a subclass of it (in its MRO, the first
 * 64 entries; or, without one, its tp_base chain, bounded)? */
int pytype_is_subtype(struct pyproc *py, uint64_t type, uint64_t base);

/*
 * A str as UTF-8, cached by address for the life of the pyproc (names,
 * file names and dict keys repeat endlessly).  *out stays owned by the
 * cache.  Fails unless obj is a str.
 */
int pystr_get(struct pyproc *py, uint64_t obj, const char **out,
	      struct cs_err *err);

/*
 * Decode a str into code points, at most max_chars of them (only those
 * are read, whatever the str's length).
 * *length receives the str's full length in code points; the first
 * min(length, max_chars) code points go to `codepoints` (an array of at
 * least max_chars entries), *ncodepoints says how many.
 */
int pystr_decode(struct pyproc *py, uint64_t obj, size_t max_chars,
		 uint32_t *codepoints, size_t *ncodepoints, size_t *length,
		 struct cs_err *err);

/* Code point c as UTF-8, as pystr_get() has them: NUL as C0 80 and a
 * lone surrogate as its three bytes, which the escaper shows as such. */
void pystr_add_codepoint(struct strbuf *sb, uint32_t c);

/* At most max bytes of a bytes object into buf; *length is its size. */
int pybytes_read(struct pyproc *py, uint64_t obj, void *buf, size_t max,
		 size_t *length, struct cs_err *err);

/* An int that fits in int64: 0 ok, 1 when it is too big (*out not
 * set), <0 error.  obj's type is the caller's to have checked (a task's
 * name, read for each of thousands of tasks, has been): where it is
 * not known, pyobj_int_i64(), which checks it is an int (or a subclass:
 * bool, IntEnum) first. */
int pyint_read_i64(struct pyproc *py, uint64_t obj, int64_t *out,
		   struct cs_err *err);
int pyobj_int_i64(struct pyproc *py, uint64_t obj, int64_t *out,
		  struct cs_err *err);

/* Any int as decimal text (sign included). */
int pyint_format(struct pyproc *py, uint64_t obj, struct strbuf *out,
		 struct cs_err *err);

int pyfloat_read(struct pyproc *py, uint64_t obj, double *out,
		 struct cs_err *err);

/* Python's repr() of a float ("0.1", "1e+16", "inf"). */
void pyfloat_repr(double v, struct strbuf *out);

/*
 * Items of a tuple or list: the first min(size, max) item pointers go to
 * items, *size gets the full length.
 */
int pyseq_items(struct pyproc *py, uint64_t obj, uint64_t *items,
		size_t max, size_t *size, struct cs_err *err);

/*
 * The same for a collections.deque (the caller knows obj is one): its
 * items are in a chain of blocks, followed for min(size, max) items and
 * no further; a chain that ends early or an index out of its block is
 * an error.
 */
int pydeque_items(struct pyproc *py, uint64_t obj, uint64_t *items,
		  size_t max, size_t *size, struct cs_err *err);

/*
 * The same for a queue.SimpleQueue (the caller knows obj is one), whose
 * items wait in a list past a position (3.7 - 3.12) or in a ring of
 * pointers (3.13+); a position or ring out of bounds is an error.
 */
int pysimplequeue_items(struct pyproc *py, uint64_t obj, uint64_t *items,
			size_t max, size_t *size, struct cs_err *err);

#endif
