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

#include "readers/gc.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"
#include "readers/tasks.h"

/* Tasks beyond this many are left out (with an error). */
#define PY_MAX_TRIO_TASKS (1u << 22)

/*
 * The trio tasks one heap walk finds (py_trio_prepare() sets it up, the
 * walk fills it, py_trio_finish() reads them); fields private.
 */
struct py_trio_scan {
	struct pyproc *py;
	uint64_t task_type;
	uint64_t *addrs;
	size_t n, alloc;
	int too_many;
};

/*
 * Before a shared heap walk (py_gc_walk_each()): 1 with *visit set when
 * trio is loaded, else 0.  Release s with py_trio_scan_release().
 */
int py_trio_prepare(struct pyproc *py, struct py_trio_scan *s,
		    struct py_gc_visit *visit);
/* After the walk and py_async_take(): as py_trio_take(), without a walk. */
int py_trio_finish(struct py_trio_scan *s, const struct py_snapshot *snap,
		   struct py_async *a, struct cs_err *err);
void py_trio_scan_release(struct py_trio_scan *s);

/*
 * With a heap walk of its own: append every live trio task to a->tasks (framework "trio") and mark
 * the generators of their chains as theirs.  Runs after py_async_take()
 * filled a.  0 when trio is not loaded; CS_ERR_UNSUPPORTED when Task's
 * slots are not what this reader knows; CS_ERR_MEMORY when the heap
 * cannot be walked.  On error a is left as it was.
 */
int py_trio_take(struct pyproc *py, const struct py_snapshot *snap,
		 struct py_async *a, struct cs_err *err);

/* (readers/trio_timers.c) The sleeps and deadlines of trio tasks
 * a->tasks[first..]: py_task.sleeps, .times_out, .timer_scope. */
void py_trio_read_timers(struct pyproc *py, struct py_async *a, size_t first);
/* (readers/trio_io.c) The file descriptor each of trio tasks
 * a->tasks[first..] is parked on: py_task.io_wait, .io_fd, .io_call. */
void py_trio_read_io(struct pyproc *py, struct py_async *a, size_t first);

#endif
