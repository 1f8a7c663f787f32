/*
 * trio's tasks (trio.lowlevel.Task, also under anyio's trio backend) as
 * tasks of the "second stack", next to asyncio's: name, coroutine chain,
 * the nursery each runs in, and an awaited-by edge from each task to the
 * task whose nursery waits for it.
 *
 * Task is an attrs slots class; its slots' offsets are read from the
 * class's member descriptors (each checked to name the slot asked for),
 * not assumed.  Nurseries are plain instances read through their dict.
 */
#ifndef COROSCOPE_READERS_TRIO_H
#define COROSCOPE_READERS_TRIO_H

#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "readers/tasks.h"

/* Tasks beyond this many are left out (with an error). */
#define PY_MAX_TRIO_TASKS (1u << 22)

/*
 * Append every live trio task to a->tasks (framework "trio") and mark
 * the generators of their chains as theirs.  Runs after py_async_take()
 * filled a.  0 when trio is not loaded; CS_ERR_UNSUPPORTED when Task's
 * slots are not what this reader knows; CS_ERR_MEMORY when the heap
 * cannot be walked.  On error a is left as it was.
 */
int py_trio_take(struct pyproc *py, const struct py_snapshot *snap,
		 struct py_async *a, struct cs_err *err);

#endif
