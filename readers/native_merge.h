/*
 * One thread's Python frames and native frames as one stack, the way a
 * reader wants it: each C eval-loop frame (_PyEval_EvalFrameDefault)
 * replaced by the Python frames it runs (one before 3.11; from 3.11 the
 * frames up to the interpreter's own entry marker, struct py_frame.entry),
 * C functions called from Python left where they are, and, unless `all`,
 * the interpreter's plumbing between them hidden.
 */
#ifndef COROSCOPE_READERS_NATIVE_MERGE_H
#define COROSCOPE_READERS_NATIVE_MERGE_H

#include <stddef.h>

#include "readers/stacks.h"
#include "symbols/native_stack.h"

struct merged_frame {
	const struct py_frame *py;       /* exactly one of py and native */
	const struct native_frame *native;
};

/*
 * Merge into a new array, innermost first (caller frees *out).
 * `interp` is the module holding the interpreter as the target names it
 * (its frames are the ones that can be plumbing); pt or nt may be NULL.
 * Python frames the native stack does not account for (it could not be
 * unwound that far) follow at the outer end.
 */
void native_merge(const struct py_thread *pt, const struct native_thread *nt,
		  const char *interp, int all, struct merged_frame **out,
		  size_t *n);

/* The eval loop's own C function: its frames stand for Python frames. */
int native_is_eval_frame(const struct native_frame *f);

/*
 * What a thread is blocked in, in one word, from its native frames:
 * "gil", "lock", "sleep", "io", "futex", "wait" or "running" (its
 * innermost frame is not a known blocking call); NULL without frames,
 * or when that innermost frame has no name outside the interpreter (a
 * C library not the core's: its call is not known).
 */
const char *native_blocked_in(const struct native_thread *nt);

#endif
