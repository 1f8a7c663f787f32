/*
 * A scheduler's own machinery that waits by design, beside the program's
 * tasks: trio's system tasks (its init task, parked until the main task
 * ends; the task that runs run_sync_soon() callbacks, parked on its
 * wakeup socket) and the generator of trio's run loop, suspended while
 * its thread waits for I/O.  Samples see them make no progress in every
 * trio program, like a stuck task: `watch` calls them idle, not stuck
 * (cli/watch_sample.c), and `run` counts them apart with the threads
 * idle by design (cli/thread_idle.h, cli/run_report.c).  So are the
 * tasks of a child multiprocessing forked, copies of its parent's that
 * never run there (readers/tasks.h, copied_at_fork), and the generator
 * of an importlib.resources.as_file() a module entered at import and
 * keeps open for good (certifi's, in every program using requests), and
 * the hook wrappers and plugin generators of pytest, parked while a test
 * runs, and the first greenlet of a gevent threadpool's worker thread.
 */
#ifndef COROSCOPE_CLI_SCHED_IDLE_H
#define COROSCOPE_CLI_SCHED_IDLE_H

#include "readers/greenlets.h"
#include "readers/tasks.h"

/* What task t is ("trio's system task", "a copy of the parent's task,
 * made by fork") when it is one; else NULL. */
const char *task_idle_by_design(const struct py_async *a,
				const struct py_task *t);
/* The same for a generator no task owns ("trio's run loop"). */
const char *gen_idle_by_design(const struct py_gen *g);
/* The same for a greenlet (a gevent threadpool worker thread's first,
 * parked in _begin() while the thread's worker greenlet runs). */
const char *greenlet_idle_by_design(const struct py_greenlet *g);

#endif
