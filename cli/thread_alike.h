/*
 * Alike threads, which the text report shows once ("Threads 101, 102,
 * 103 (3 alike)" over their one traceback): a thread pool parks its
 * workers on one line, and 2,000 identical tracebacks were 1.6 MB of
 * text.  Alike: the same interpreter, the same frames (code objects and
 * lines, outermost to innermost) and the same marks (the GIL, older
 * frames unread, frames left out); with native stacks, the same C frames
 * as the report shows them (hidden ones, the eval loop's, may differ:
 * each thread returns to wherever its own bytecode called from).
 */
#ifndef COROSCOPE_CLI_THREAD_ALIKE_H
#define COROSCOPE_CLI_THREAD_ALIKE_H

#include <stddef.h>

#include "readers/stacks.h"
#include "symbols/native_stack.h"

/* Fewer alike threads than this are each shown on their own. */
#define THREAD_ALIKE_MIN 3
/* Names shown of a group's threads (every id is). */
#define THREAD_ALIKE_NAMES 5

/* The C stacks compared too, as native_merge() shows them. */
struct thread_alike_native {
	const struct native_stacks *stacks;
	const char *interp;   /* the module holding the interpreter */
	int all;              /* every C frame shown (--native-all) */
};

/* next[i] of the last thread of a group. */
#define THREAD_ALIKE_END ((size_t)-1)

/*
 * For each of snap's threads, first[i]: the index of the first thread
 * alike it (i when no thread before it is); next[i]: the next thread
 * alike it, or THREAD_ALIKE_END; and for each such first k, count[k]:
 * how many threads are alike it, itself included.  The arrays have
 * snap->nthreads entries.  native: NULL without native stacks.  A thread
 * whose kernel id is unknown is alike no other: its entry is all that
 * tells it apart; so is one whose apart[i] is set (apart may be NULL).
 */
void thread_alike(const struct py_snapshot *snap,
		  const struct thread_alike_native *native,
		  const unsigned char *apart, size_t *first, size_t *next,
		  size_t *count);
/*
 * The same over the native stacks' threads, for those with no Python
 * thread state (has_py[i] 0; the others are alike none): alike when
 * their C frames, as the report shows them, and marks are the same.
 */
void thread_alike_native_only(const struct thread_alike_native *native,
			      const unsigned char *has_py, size_t *first,
			      size_t *next, size_t *count);

#endif
