/*
 * Between the parts of the wait-for graph: readers/waitgraph.c builds
 * it, with what readers/waitgraph_frames.c says of frames,
 * readers/waitgraph_futures.c of futures' done callbacks and
 * readers/waitgraph_threads.c of threads' waits for other threads (an
 * executor's job, a join, the interpreter's exit);
 * readers/waitgraph_query.c keeps it (storage, indexes, cycles) and
 * answers the queries of readers/waitgraph.h.
 */
#ifndef COROSCOPE_READERS_WAITGRAPH_INTERNAL_H
#define COROSCOPE_READERS_WAITGRAPH_INTERNAL_H

#include "readers/waitgraph.h"

#define WG_MAX_FRAMES 256     /* frames of one unit looked at */
#define WG_MAX_PREFIX 512

struct fut_links;

/* One build of the graph: what it reads with and what it has seen. */
struct wg_build {
	struct pyproc *py;
	size_t task_base;             /* the first task's node */
	const struct py_snapshot *snap;
	const struct py_async *a;
	struct py_waitgraph *g;
	struct py_prim_types types;
	char stdlib[WG_MAX_PREFIX];   /* ".../lib/python3.X/", or "" */
	struct addrmap fut_links;     /* future -> struct fut_links * */
	/* fut_links_of()'s last answer (0: none): a task's waiter is asked
	 * for up to three times in a row, and many tasks may share one. */
	uint64_t last_fut;
	struct fut_links *last_links;
	struct addrmap edge_set;      /* edge_key() of every edge */
	/* node + 1 -> the future node + 1 it waits for, or VIA_MANY */
	struct addrmap via_future;
	struct addrmap code_class;    /* code address -> CODE_* bits */
	/* asyncio futures an anyio worker thread will complete (the job
	 * it runs) -> its thread node + 1 */
	struct addrmap worker_futures;
	/* the queue a thread in trio.from_thread.run() waits on -> its
	 * node + 1: the trio task that runs the call will put to it */
	struct addrmap trio_calls;
	/* task index + 1 -> the future the last generator it drives
	 * (tornado's Runner.future) yielded: what it waits on there */
	struct addrmap drive_ends;
	/* The last code_class() answer: a unit's frames are asked about up
	 * to three times each, and the tasks' run the same code in a row. */
	uint64_t last_code;
	unsigned last_class;
	/* waits_for_first()'s last task and answer (NULL: none): a task
	 * awaiting 100,000 in asyncio.wait() is asked about for each.
	 * first_of_set: the futures it waits for the first of, where known
	 * (first_of_says FIRST_OF_SET). */
	const struct py_task *first_of;
	int first_of_says;
	struct addrmap first_of_set;
	struct py_prim_memo prims;    /* zeroed: empty */
	const struct py_greenlets *gl;  /* or NULL */
};

/* How wg_scan_unit() reads a unit's frames. */
enum {
	/* a thread: its concurrent.futures waits (wg_futures_wait()) */
	WG_SCAN_THREAD = 1,
	/* the innermost frame is inside a call (a thread's, a greenlet's
	 * switched away in a C or Cython call): its stack depth is not
	 * recorded, only a `with` being entered is looked for there */
	WG_SCAN_MIDCALL = 2,
};

/*
 * What a unit's frames (innermost first) say: the primitive the library
 * frames on top wait on, the locks its `with` blocks hold, where it is
 * blamed.  task: the unit's task, when it is one (a trio or anyio lock
 * it was handed is no wait), else NULL.
 */
void wg_scan_unit(struct wg_build *b, size_t node,
		  const struct py_frame *const *f, size_t n, unsigned how,
		  const struct py_task *task);
/* readers/waitgraph_frames.c: the frame a unit (frames innermost
 * first) is named as innermost in: past trio's traps and trio.sleep()'s
 * inner calls; NULL without frames. */
const struct py_frame *wg_unit_inner(const struct py_frame *const *f,
				     size_t n);
/* readers/waitgraph_pool.c: a pending future of a job queued in a
 * ThreadPoolExecutor, which something waits on, waits for the first of
 * the pool's worker threads (after the threads are scanned: their
 * waits made the futures' nodes). */
void wg_link_thread_pools(struct wg_build *b);
/* readers/waitgraph_greenlets.c: a node for each parked greenlet and
 * what its frames hold (before the owners are linked: a lock first seen
 * there is then linked to its owner too); then what gevent's primitives
 * say the greenlets wait on and who owns them. */
void wg_add_greenlets(struct wg_build *b);
void wg_link_greenlets(struct wg_build *b);

/* An edge, unless there is one of that kind between the two already
 * (`at`: where a hold was entered, or NULL). */
void wg_add_edge(struct wg_build *b, enum wg_edge_kind kind, size_t from,
		 size_t to, const struct py_frame *at);
/* A hold edge from a with block: took_line, the line of the with
 * statement that took it (0 unknown), is kept with it. */
void wg_add_hold(struct wg_build *b, size_t from, size_t to,
		 const struct py_frame *at, int took_line);
/*
 * readers/waitgraph_any.c: the choices of "first of" edges added with
 * none counted, and a waiter with one choice left waiting plainly
 * (wg_settle_any()); g->any_blocked, from the grouped edges
 * (wg_any_blocked()); does edge e count in the cycle search?
 */
void wg_settle_any(struct py_waitgraph *g);
void wg_any_blocked(struct py_waitgraph *g);
int wg_any_counts(const struct py_waitgraph *g, const struct wg_edge *e);
/* Is the task at addr, which task t awaits, one of several t waits for
 * the first of (readers/waitgraph_first.c)?  0 not, else the choices
 * t has + 1 (1: as many as it awaits). */
size_t wg_first_of(struct wg_build *b, const struct py_task *t,
		   uint64_t addr);
/* The items of a set, frozenset, list or tuple v, at most max, into
 * out: how many. */
size_t wg_collection_items(struct pyproc *py, uint64_t v, uint64_t *out,
			   size_t max);
/* A waits-for edge from `from` to one of `choices` things it waits for
 * the first of (wg_edge.any); choices 0: as many as such edges it gets
 * (wg_settle_any()).  A waiter with one choice waits for it plainly. */
void wg_add_any_edge(struct wg_build *b, size_t from, size_t to,
		     size_t choices);
/* The node of primitive obj (added on first sight), or -1 if obj is
 * not one. */
long wg_object_node(struct wg_build *b, uint64_t obj);
/* py_prim_read() of obj, each object read once per graph: 1 when it
 * is a primitive (p filled). */
int wg_prim_read(struct wg_build *b, uint64_t obj, struct py_prim *p);

/* What a unit's holds are judged against. */
struct wg_unit_holds {
	/* managers its frames gave up (Condition.wait()'s Condition and
	 * the Condition's lock) */
	const uint64_t *released;
	size_t nreleased;
	const struct py_task *task;  /* a task's, or NULL */
	uint64_t ident;   /* a thread's ident (an RLock's owner), or 0 */
	uint64_t waited;  /* what it waits for, or 0 */
	/* the frame whose blocks are read is the one that waits for
	 * `waited` (a lock its own open `with` entered: released by hand
	 * inside the block and waited for again, `with lk: lk.release();
	 * ...; lk.acquire()`, which another may hold meanwhile; or a
	 * self-deadlock: the two look the same) */
	int waits_here;
};

/* The locks that the open `with` blocks wb of frame f hold, as holds
 * edges from node (readers/waitgraph_holds.c): not those u released,
 * nor a lock that names another owner than u's task or thread; through
 * a generator-based context manager, the blocks its suspended
 * generator holds open; through an ExitStack, what it entered, and
 * what its callback() will release unless u waits for it (a callback
 * registered before the acquire proves no acquire). */
struct py_with_blocks;
void wg_add_holds(struct wg_build *b, size_t node, const struct py_frame *f,
		  const struct py_with_blocks *wb,
		  const struct wg_unit_holds *u);

/* Does frame f, a method of primitive p (its `self`), wait on p?  A
 * Thread is waited for in join() only (every thread runs in Thread
 * methods: _bootstrap, run), a child process only in the methods that
 * wait for it (not in start(), nor, in the child, run()); any other
 * primitive in any of its library's frames. */
int wg_frame_waits_on(struct wg_build *b, const struct py_prim *p,
		      const struct py_frame *f);
/* A `with cond:` holds the Condition's lock too: a holder of a
 * threading.Condition holds its _lock where that lock has a node (a
 * thread waits in a bare cond.acquire(), which is the lock's). */
void wg_link_condition_locks(struct wg_build *b);
/* Holds edges for the holders a lock names itself (an RLock's owning
 * thread, a trio.Lock's owning task), readers/waitgraph_holds.c. */
void wg_link_owners(struct wg_build *b);
/* Is thread node `node` blocked acquiring primitive p, whose acquire()
 * its innermost frame's value stack holds (py_with_blocks.entering_by
 * _call)?  Not when p is free or an RLock it owns, nor when its stopped
 * registers say it is in another system call than futex(2), where such
 * a stack slot is a leftover (an acquire() that raised, an older call's
 * memory: before 3.14 the live depth is not known). */
int wg_thread_acquiring(struct wg_build *b, size_t node,
			const struct py_prim *p);
/* The waits thread t (its node) shows as a worker or at exit: the
 * executor job it runs waits for it; in threading's _shutdown it waits
 * for every non-daemon thread left. */
void wg_link_thread(struct wg_build *b, size_t thread_node,
		    const struct py_thread *t);
/* Is f concurrent.futures' wait() or as_completed() waiting for futures
 * not yet done?  Then the unit (node) waits for them, not for the Event
 * of the waiter it installed in them (1): for each (return_when
 * ALL_COMPLETED or FIRST_EXCEPTION), or for the first of them
 * (FIRST_COMPLETED, as_completed(): wg_edge.any). */
int wg_futures_wait(struct wg_build *b, size_t node, const struct py_frame *f);
/* Once the units are scanned: each result of a multiprocessing pool
 * waited on waits for the pool's workers (then for the threads of a
 * ThreadPool's, through wg_link_joined()). */
void wg_link_pool_results(struct wg_build *b);
/* Once the units are scanned: each Thread being joined waits for the
 * thread it runs as. */
void wg_link_joined(struct wg_build *b);

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
/* Does the idle frame f[k] (innermost first) rest there: a queue's
 * feeder thread waiting in its Condition for something to send, not
 * in a send (blocked writing to a pipe nobody reads, which a join at
 * the process's exit waits for)? */
int wg_idle_inside(const struct py_frame *const *f, size_t k);

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

/* A task's waits across trio's threads (readers/waitgraph_trio.c):
 * the worker thread of its to_thread_run_sync(), and the thread whose
 * from_thread.run() call it runs. */
void wg_link_trio_threads(struct wg_build *b, size_t node,
			  const struct py_frame *const *f, size_t n);
/* Does trio task w wait in the exit of nursery (its `async with`'s
 * end), where alone a parent waits for its nursery's children? */
int wg_in_nursery_exit(struct wg_build *b, const struct py_task *w,
		       uint64_t nursery);
/* Pending concurrent futures of run_coroutine_threadsafe() whose
 * coroutine no task runs yet (readers/waitgraph_threadsafe.c): each
 * waits for the thread of the loop it is scheduled on. */
void wg_link_threadsafe(struct wg_build *b);
/* aiohttp's connector (readers/waitgraph_aiohttp.c): the holds of
 * task node's frames (its request's connection, one being made), and of
 * a manager its with block holds (`async with session.get(...)`): 1 when
 * mgr held a connection of a connector something waits for. */
void wg_link_aiohttp(struct wg_build *b, size_t node,
		     const struct py_frame *const *f, size_t n);
int wg_aiohttp_hold(struct wg_build *b, size_t node, uint64_t mgr,
		    const struct py_frame *at, int took_line);

#endif
