/*
 * Every thread's native stack, unwound (symbols/unwind.h) and named
 * (symbols/native_symbols.h): plain data for readers/native_merge.h and
 * cli/ to merge and print.
 */
#ifndef COROSCOPE_SYMBOLS_NATIVE_STACK_H
#define COROSCOPE_SYMBOLS_NATIVE_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "attach/memsrc.h"
#include "symbols/native_symbols.h"

/* One function at one pc: a pc with inlined calls gives several, the
 * inlined ones first. */
struct native_frame {
	uint64_t pc;
	struct native_sym sym;
	int signal;        /* a signal trampoline: a handler runs above it */
};

struct native_thread {
	int tid;
	struct native_frame *frames;   /* innermost first */
	size_t nframes;
	int has_regs;                  /* 0: not stopped (--no-block) */
	int left_running;              /* ... left running, asleep in a
					  write (attach/live.h) */
};

struct native_tid_index {
	int tid;
	size_t at;                     /* in native_stacks.threads */
};

struct native_stacks {
	struct native_thread *threads; /* in the source's thread order */
	size_t nthreads;
	/* threads' kernel ids, sorted, for native_stacks_find() (NULL:
	 * none made, a scan then) */
	struct native_tid_index *by_tid;
	struct native_symbolizer *sym; /* owns the frames' strings */
};

/*
 * Unwind and name every thread of the source (registers must have been
 * saved: a stopped live process or a core).  Errors: CS_ERR_INTERNAL.
 */
int native_stacks_take(struct native_stacks *ns, struct memsrc *ms,
		       struct cs_err *err);
void native_stacks_release(struct native_stacks *ns);

/* Index ns's threads by kernel id for native_stacks_find() (anew, should
 * one be made): native_stacks_take() does; stacks made otherwise may. */
void native_stacks_index(struct native_stacks *ns);
/* The thread with kernel id tid, or NULL: the first in the source's
 * order, should it name a tid twice.  O(log n) once indexed: the report
 * looks up each of 2,000 threads. */
const struct native_thread *native_stacks_find(const struct native_stacks *ns,
					       int tid);

#endif
