/*
 * A located CPython interpreter inside a target: which module holds it,
 * its exact version, the version table to read it with, and the run-time
 * addresses of the symbols readers need (type objects, singletons).
 *
 * pyproc_locate() reads ELF files and a few static bytes of the target
 * (the _Py_DebugOffsets block of 3.13+, the _asyncio .AsyncioDebug
 * section), so it runs before the target is stopped.  Only for a build
 * whose exact version no file tells (no Py_Version, no PY_VERSION string
 * found) does it read sys.version from the running target.
 */
#ifndef COROSCOPE_READERS_PYPROC_H
#define COROSCOPE_READERS_PYPROC_H

#include <stdint.h>

#include "attach/memsrc.h"
#include "common/addrmap.h"
#include "readers/layout.h"
#include "symbols/modules.h"

/* Type objects and singletons compared against ob_type / object addresses.
 * Zero when the symbol was not found (then the object shows generically). */
struct py_types {
	uint64_t none, true_, false_;
	uint64_t type, str, bytes, int_, bool_, float_, tuple, list, dict,
		 set, frozenset, cell, code, gen, coro, asyncgen, module;
};

/* One remembered line lookup (readers/code.c). */
struct py_line_memo {
	uint64_t code;         /* code object address, 0 = empty */
	long offset;
	int line;
};

#define PY_LINE_MEMO 256       /* a power of two */

/* One remembered exception-table walk (readers/withblocks.c): the
 * depths of the with handlers covering an offset, innermost first, and
 * each handler's first code unit (whose line is the with statement's). */
#define PY_WITH_MEMO_DEPTHS 6
struct py_with_memo {
	uint64_t code;         /* code object address, 0 = empty */
	long offset;
	uint8_t n;             /* depths[] used */
	uint32_t depths[PY_WITH_MEMO_DEPTHS];
	uint32_t targets[PY_WITH_MEMO_DEPTHS];
};

#define PY_WITH_MEMO 256       /* a power of two */
/* Up to 3.10, the line of the with statement whose block's handler is
 * at an offset (readers/withblocks.c): offset is the block's b_handler. */
#define PY_SETUP_MEMO 64       /* a power of two */

/* One remembered read of the instruction after a suspended generator's
 * (readers/gens.c). */
struct py_insn_memo {
	uint64_t at;           /* its address, 0 = empty */
	uint8_t len;           /* bytes read: 1 or 2 */
	uint8_t insn[2];
};

#define PY_INSN_MEMO 64        /* a power of two */

struct pyproc {
	struct memsrc *ms;                 /* borrowed */
	struct module_list mods;
	const struct module *pymod;        /* libpython, or the executable */
	struct py_layout layout;           /* a copy: 3.13+ patch it */
	int major, minor, micro;
	char version[32];                  /* "3.11.7" */
	char *executable;                  /* the target's executable path */

	uint64_t runtime;                  /* &_PyRuntime (3.7+), else 0 */
	uint64_t interp_head_var;          /* &interp_head (3.6), else 0 */
	uint64_t tstate_current_var;       /* &_PyThreadState_Current (3.6) */
	uint64_t gc_generation0_var;       /* &_PyGC_generation0 (3.6) */
	struct py_types types;
	/* Items of a container pyrepr() shows, 0 for PY_REPR_MAX_ITEMS. */
	size_t repr_max_items;

	struct addrmap codes;  /* struct py_code * by address (readers/code.c) */
	/* The code object found last (NULL: none), asked for again before
	 * any other: a generator's code by py_gen_read() and then by its
	 * frame's decoding, and coroutines in a row that run the same. */
	const struct py_code *last_code;
	struct addrmap strs;   /* UTF-8 char * by str address (objects.c) */
	/* The str found last and its text (last_str 0: none): the
	 * generators read in a row mostly share their qualname. */
	uint64_t last_str;
	const char *last_str_text;
	struct addrmap typenames; /* tp_name char * by type address */
	/* A primitive's subclass as "module.Name" by type address
	 * (readers/primitives.c), "" for none. */
	struct addrmap classnames;
	/* The type a generator awaited last that is not a generator, and
	 * where it keeps what it wraps (readers/gens.c; 0: none yet). */
	uint64_t unwrap_type;
	int unwrap_at;
	/* Lines by (code, offset), direct-mapped: ten thousand coroutines
	 * suspended at the same await need one line table walk, not 10^4. */
	struct py_line_memo line_memo[PY_LINE_MEMO];
	/* Likewise the with handlers by (code, offset) (3.11+). */
	struct py_with_memo with_memo[PY_WITH_MEMO];
	struct py_line_memo setup_memo[PY_SETUP_MEMO];
	/* The instruction bytes gen_delegate() read by address: coroutines
	 * by the thousand suspended at the same await read the same two. */
	struct py_insn_memo insn_memo[PY_INSN_MEMO];
};

/*
 * Errors: CS_ERR_NOT_PYTHON (no interpreter symbols in any module),
 * CS_ERR_UNSUPPORTED (a version without a table, or a _Py_DebugOffsets
 * block that does not validate).
 */
int pyproc_locate(struct pyproc *py, struct memsrc *ms, struct cs_err *err);
/*
 * Does ms map a file named as an interpreter is (python3.12,
 * libpython3.12.so.1.0)?  A guess from the names alone, for work worth
 * starting before pyproc_locate() confirms it (an interpreter built into
 * a program of another name is not guessed).
 */
int pyproc_likely(const struct memsrc *ms);
void pyproc_release(struct pyproc *py);

/* The first interpreter state (the head of the interpreter list). */
int pyproc_interp_head(struct pyproc *py, uint64_t *head, struct cs_err *err);

/* Drop cached objects (the target ran since they were read). */
void pyproc_forget_objects(struct pyproc *py);

/*
 * A second reader of the same target for another thread: what
 * pyproc_locate() found, shared (the memsrc too: see memsrc_share()),
 * with caches of its own, empty.  What it reads borrows from its caches
 * (code objects, strings), so it lives as long as that; free it with
 * pyproc_clone_free(), which frees only its caches.
 */
struct pyproc *pyproc_clone(const struct pyproc *py);
void pyproc_clone_free(struct pyproc *clone);

#endif
