/*
 * Reading the many generators a heap walk found, on two threads when it
 * pays: tens of thousands of coroutines of a busy asyncio server are a
 * third of a dump's reading, each independent of the others.
 */
#ifndef COROSCOPE_READERS_GENS_MANY_H
#define COROSCOPE_READERS_GENS_MANY_H

#include <stddef.h>
#include <stdint.h>

#include "readers/gens.h"

/* The i-th generator to read: its address and kind. */
typedef void py_gen_at_fn(const void *ctx, size_t i, uint64_t *addr,
			  enum py_code_kind *kind);

/* Other reading the calling thread does first (see below). */
typedef void py_gens_first_fn(void *ctx);

/*
 * py_gen_read_raw() of the n generators at(ctx, 0 .. n - 1) into gens[i],
 * ok[i] nonzero when it was read (else gens[i] is cleared).  On a
 * captured source with enough of them and two CPUs to run on, another
 * thread reads some (block
 * by block, as each thread is free) with a pyproc_clone(), returned in
 * *helper: gens borrow from it (qualnames, local names), so free it
 * (pyproc_clone_free()) after them; NULL when there is none.  Their code
 * objects are py's either way, as if py had read them all.  first(fctx),
 * when given, runs on the calling thread before it takes generators:
 * reading of py's own that needs no generator (the tasks' fields), done
 * while the other thread has the generators to itself, and as a shared
 * source's reader (memsrc_share()).
 */
void py_gens_read_many(struct pyproc *py, size_t n, py_gen_at_fn *at,
		       const void *ctx, const struct py_stack_options *opt,
		       struct py_gen *gens, unsigned char *ok,
		       struct pyproc **helper, py_gens_first_fn *first,
		       void *fctx);

#endif
