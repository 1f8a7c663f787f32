/*
 * Code objects, decoded once per address and cached for the life of the
 * pyproc: every frame of a function shares its code object, so a dump of
 * ten thousand coroutines reads each function's code once.
 */
#ifndef COROSCOPE_READERS_CODE_H
#define COROSCOPE_READERS_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "readers/pyproc.h"

enum py_code_kind {
	PY_CODE_FUNCTION,
	PY_CODE_GENERATOR,
	PY_CODE_COROUTINE,
	PY_CODE_ASYNC_GENERATOR,
};

/* How a fast-locals slot is read (from CO_FAST_* kinds, or the
 * varnames/cellvars/freevars split before 3.11). */
enum py_local_kind {
	PY_LOCAL_PLAIN = 0,
	PY_LOCAL_CELL = 1,     /* holds a cell: show its contents */
	PY_LOCAL_HIDDEN = 2,   /* not visible in f_locals */
};

struct py_code {
	uint64_t addr;
	const char *name;        /* co_name; strings owned by py->strs */
	const char *qualname;    /* co_qualname, or co_name before 3.11 */
	const char *filename;
	int firstlineno;
	int flags;
	enum py_code_kind kind;
	uint8_t *linetable;      /* raw line table bytes */
	size_t linetable_len;
	uint64_t code_start;     /* first instruction (3.11+), else 0 */
	uint64_t code_len;       /* bytes of instructions from code_start */
	uint64_t tlbc;           /* co_tlbc: per-thread copies, or 0 */
	uint64_t bytecode;       /* address of the instruction bytes (the
				    co_code bytes' data before 3.11) */
	int firsttraceable;      /* _co_firsttraceable (3.11+), else 0 */
	size_t nlocalsplus;      /* slots in localsplus / f_localsplus */
	const char **localnames; /* nlocalsplus names (NULL: unnamed) */
	uint8_t *localkinds;     /* nlocalsplus enum py_local_kind values */
};

/* The decoded code object at addr.  *out stays owned by the cache. */
int py_code_get(struct pyproc *py, uint64_t addr, const struct py_code **out,
		struct cs_err *err);
/* The code object at addr when the cache has it already, else NULL: no
 * read.  What the cache holds was checked to be a code object when it
 * was decoded, and the caches are forgotten between readings: within a
 * reading of a stopped or copied target it is still one.  A racy read of
 * the running target (--no-block, watch's locals after the resume) may
 * find the address reused, as it may find anything else changed. */
const struct py_code *py_code_cached(const struct pyproc *py, uint64_t addr);

/* Per-thread bytecode copies looked at: one per thread that ran it. */
#define PY_TLBC_MAX 4096

/*
 * The byte offset into the bytecode of an instruction pointer (3.11+).
 * Free-threaded builds run a per-thread copy of the bytecode (co_tlbc):
 * an ip in one of those copies gives its offset there.  -1 when the ip
 * lies in none of them.
 */
long py_code_offset(struct pyproc *py, const struct py_code *code,
		    uint64_t ip);

/* The line executing at a byte offset into the bytecode, or -1. */
int py_code_line(struct pyproc *py, const struct py_code *code, long offset);

void code_cache_clear(struct pyproc *py);

/* Is code (NULL: no) the function `name` (co_name) of a file whose name
 * ends with `file` ("asyncio/base_events.py")? */
int py_code_is(const struct py_code *code, const char *file,
	       const char *name);

/* The slot of (code, offset) in a direct-mapped memo of `size` entries
 * (a power of two): the line memo and the with-handler memo. */
static inline size_t py_code_memo_slot(uint64_t code, long offset,
				       size_t size)
{
	uint64_t h = (code ^ (uint64_t)offset * 0x9e3779b97f4a7c15u) *
		     0x9e3779b97f4a7c15u;

	return (size_t)(h >> 40) & (size - 1);
}

#endif
