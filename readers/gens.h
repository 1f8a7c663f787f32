/*
 * Generators, coroutines and async generators: their state as inspect
 * reports it, where they are suspended, and what they delegate to
 * (gi_yieldfrom / cr_await / ag_await): the links of the "second stack".
 *
 * Version differences live in the table; the few behavioural ones (how
 * a suspended frame says "I am in a yield from") are in gen_delegate().
 */
#ifndef COROSCOPE_READERS_GENS_H
#define COROSCOPE_READERS_GENS_H

#include <stdint.h>

#include "readers/code.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"

enum py_gen_state {
	PY_GEN_CREATED,
	PY_GEN_RUNNING,
	PY_GEN_SUSPENDED,
	PY_GEN_CLOSED,
};

struct py_gen {
	uint64_t addr;
	enum py_code_kind kind;       /* generator, coroutine, async_generator */
	enum py_gen_state state;
	const char *qualname;         /* gi_qualname; borrowed from the cache */
	const struct py_code *code;   /* NULL when unreadable */
	struct py_frame frame;        /* valid when has_frame */
	int has_frame;                /* not closed, frame decoded */
	uint64_t awaiting;            /* delegate, unwrapped (see below), or 0 */
	uint64_t awaiting_raw;        /* the delegate object itself */
	uint64_t task;                /* the task whose chain holds it, or 0 */
	int64_t interp_id;            /* its interpreter, -1 unknown */
	int interp_main;              /* 1 main, 0 not, -1 unknown */
};

/* Which kind of generator-like object a type is, or -1 for none. */
int py_gen_kind_of_type(const struct pyproc *py, uint64_t type);

/*
 * Read one generator-like object.  `awaiting` is the delegate with the
 * wrappers removed: async_generator_asend/athrow give their generator,
 * coroutine_wrapper its coroutine, _asyncio.FutureIter its future.
 */
int py_gen_read(struct pyproc *py, uint64_t addr, enum py_code_kind kind,
		const struct py_stack_options *opt, struct py_gen *gen,
		struct cs_err *err);
/*
 * The same, but `awaiting` left as `awaiting_raw`, for a caller that
 * knows which addresses are generators (which no wrapper hides) and
 * calls py_gen_unwrap() for the others: most coroutines await another,
 * and reading each delegate's type (a cache miss apiece) was a third of
 * reading 50,000 coroutines.
 */
int py_gen_read_raw(struct pyproc *py, uint64_t addr, enum py_code_kind kind,
		    const struct py_stack_options *opt, struct py_gen *gen,
		    struct cs_err *err);
/* Set gen->awaiting from gen->awaiting_raw as py_gen_read() does;
 * returns it. */
uint64_t py_gen_unwrap(struct pyproc *py, struct py_gen *gen);
void py_gen_release(struct py_gen *gen);

const char *py_gen_state_name(enum py_gen_state state);

/* A type's tp_name, cached by type address for the pyproc's life. */
const char *py_type_name_cached(struct pyproc *py, uint64_t type);

#endif
