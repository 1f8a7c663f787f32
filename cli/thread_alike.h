/*
 * Alike threads, which the text report shows once ("Threads 101, 102,
 * 103 (3 alike)" over their one traceback): a thread pool parks its
 * workers on the same line, and 2,000 identical tracebacks were 1.6 MB
 * of text.  Alike: the same interpreter, the same frames (code objects
 * and lines, outermost to innermost) and the same marks (the GIL, older
 * frames unread, frames left out).
 */
#ifndef COROSCOPE_CLI_THREAD_ALIKE_H
#define COROSCOPE_CLI_THREAD_ALIKE_H

#include <stddef.h>

#include "readers/stacks.h"

/* Fewer alike threads than this are each shown on their own. */
#define THREAD_ALIKE_MIN 3
/* Names shown of a group's threads (every id is). */
#define THREAD_ALIKE_NAMES 5

/*
 * For each of snap's threads, first[i]: the index of the first thread
 * alike it (i when no thread before it is); and for each such first k,
 * count[k]: how many threads are alike it, itself included.  Both arrays
 * have snap->nthreads entries.
 */
void thread_alike(const struct py_snapshot *snap, size_t *first,
		  size_t *count);

#endif
