/*
 * Between the parts of the wait-for graph: readers/waitgraph.c builds
 * it, with what readers/waitgraph_frames.c says of frames and
 * readers/waitgraph_futures.c of futures' done callbacks;
 * readers/waitgraph_query.c keeps it (storage, indexes, cycles) and
 * answers the queries of readers/waitgraph.h.
 */
#ifndef COROSCOPE_READERS_WAITGRAPH_INTERNAL_H
#define COROSCOPE_READERS_WAITGRAPH_INTERNAL_H

#include "readers/waitgraph.h"

/* Once every node and edge is in: index the edges by their ends and
 * find the cycles. */
void wg_finish(struct py_waitgraph *g);

/* The drives of each of ntasks tasks: (*dlist)[(*dstart)[t] ..
 * (*dstart)[t + 1]) index g->drives, in the order they were added
 * (outermost first).  Both arrays are the caller's to free. */
void wg_drives_by_task(const struct py_waitgraph *g, size_t ntasks,
		       size_t **dstart, size_t **dlist);

/* Is file one whose frames hold the primitive waited on in `self`
 * (threading.py, asyncio/locks.py, trio/_sync.py...)? */
int wg_is_prim_lib(const char *file);

/* Is f a server's normal rest: a listener's accept, uvicorn's main
 * loop, a keep-alive connection's read? */
int wg_idle_frame(const struct py_frame *f);

/* The raw value of frame f's local `name`, cells opened; 0 if none. */
uint64_t wg_frame_local(struct pyproc *py, const struct py_frame *f,
			const char *name);

/* The pytest node id of the test thread t runs (from `item` in pytest's
 * runtest frames), malloc'd, or NULL. */
char *wg_pytest_node(struct pyproc *py, const struct py_thread *t);

/* The standard library's directory, from the path of threading.py or
 * asyncio/ in any frame of snap: the target's own, wherever it is
 * installed; into out (len bytes, "" kept when none is found). */
void wg_find_stdlib(const struct py_snapshot *snap, char *out, size_t len);

/* Done callbacks of a future and closures looked at, at most. */
#define WG_MAX_CALLBACKS 16

/* The callables future fut calls when done, at most max: a C asyncio
 * future's (c_future its type, 0 unknown) fut_callback0 and
 * fut_callbacks, a Python one's _callbacks, a concurrent future's
 * _done_callbacks; (callback, context) tuples (3.7+) opened. */
size_t wg_future_callbacks(struct pyproc *py, uint64_t c_future, uint64_t fut,
			   uint64_t *out, size_t max);

/* The values in the closure cells of cb, a function whose code is
 * called `name` (any function when NULL); at most max. */
size_t wg_closure_values(struct pyproc *py, uint64_t cb, const char *name,
			 uint64_t *out, size_t max);

/* Is cb a function of tornado/locks.py? */
int wg_tornado_locks_code(struct pyproc *py, uint64_t cb);

/* Futures of one object's waiters looked at, at most. */
#define WG_MAX_DEQUE_FUTURES 4096

/*
 * future -> the object (its address) in whose deque of waiters it is,
 * for the nwanted futures in wanted (what tasks await) and a's
 * waitables (readers/waitables.h), into out: a task awaiting that
 * future waits on that object.  A Lock's own futures (its _block's) are
 * its, not its inner semaphore's.  Stops once all are placed.
 */
void wg_deque_waits(struct pyproc *py, const struct py_prim_types *t,
		    const struct py_async *a, const struct addrmap *wanted,
		    size_t nwanted, struct addrmap *out);

#endif
