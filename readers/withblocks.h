/*
 * Open `with` / `async with` blocks of one frame: the context managers a
 * frame has entered and not yet left, and the one it is entering now.
 *
 * CPython records no owner for most locks; the frame that entered
 * `with lock:` keeps the bound __exit__ on its value stack, which is the
 * only trace of who holds it.  Where that lives differs by version:
 * the block stack (f_blockstack, <= 3.10: a SETUP_FINALLY block whose
 * slot b_level - 1 holds the exit) and the exception table (3.11+: each
 * handler entry covering the current instruction, followed through its
 * target, names a depth whose slot depth - 1 holds the exit).  A slot
 * counts only when it holds a bound method or builtin method named
 * after __exit__/__aexit__'s owner, so try/finally blocks drop out.
 *
 * A frame stopped at the instruction that calls __enter__ (SETUP_WITH,
 * BEFORE_WITH, 3.14's LOAD_SPECIAL + CALL) has pushed the exit already
 * but is still acquiring: that manager is reported apart.  So is the
 * object whose acquire() (or __enter__()) an executing frame calls as a
 * C method, `lock.acquire()` with no `with`: its value stack holds the
 * method and the object.
 */
#ifndef COROSCOPE_READERS_WITHBLOCKS_H
#define COROSCOPE_READERS_WITHBLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "readers/pyproc.h"

#define PY_MAX_WITH 32  /* open blocks kept per frame */

struct py_with_blocks {
	uint64_t held[PY_MAX_WITH];  /* context managers (exit's __self__) */
	/* The line of the with statement that entered held[i] (its
	 * handler's first instruction from 3.11, its SETUP_WITH before),
	 * 0 unknown: where a lock was taken, not where its holder is now. */
	int held_line[PY_MAX_WITH];
	size_t nheld;
	/* The manager being entered is one of these, the first the caller
	 * recognises: up to 3.12 the exit pushed before __enter__ is
	 * called, from 3.13 the manager itself (the exit is pushed only
	 * after __enter__ returns), nearest the top of the stack first;
	 * or, in any other instruction, the objects whose acquire() it
	 * calls (the first is the call's). */
	uint64_t entering[PY_MAX_WITH];
	size_t nentering;
	int entering_by_call;  /* they are acquire()'s, not a with's */
};

/*
 * Read the open with blocks of the decoded frame f (at f->addr: a
 * PyFrameObject up to 3.10, an _PyInterpreterFrame after).  `innermost`:
 * the frame is the one executing (its stack depth is not recorded; only
 * an entering manager is looked for there).  0 or a negative status.
 */
struct py_frame;
int py_with_blocks_read(struct pyproc *py, const struct py_frame *f,
			int innermost, struct py_with_blocks *out,
			struct cs_err *err);

/*
 * The context manager whose exit `exit` is: a method or builtin method
 * named __exit__ or __aexit__ (a Python function, also under
 * decorators that keep __wrapped__; a Cython function; a C class's
 * method_descriptor bound with MethodType), bound to it.  1 and *mgr
 * set, or 0.
 */
int py_exit_manager(struct pyproc *py, uint64_t exit, uint64_t *mgr);
/* The same for any name named() accepts (a callback's `lock.release`):
 * the object callable is bound to. */
int py_bound_to(struct pyproc *py, uint64_t callable,
		int (*named)(const char *), uint64_t *self);

#endif
