/*
 * The synchronisation objects a thread or task can wait on -- asyncio's
 * and threading's Lock, RLock, Event, Condition, Semaphore,
 * BoundedSemaphore, Barrier, the queue families; trio's Lock,
 * StrictFIFOLock, Event, Condition, Semaphore, CapacityLimiter and
 * memory channels; anyio's Lock, Condition, Semaphore and (on asyncio)
 * CapacityLimiter; tornado's Lock, Event, Semaphore, BoundedSemaphore,
 * Condition and Queue; gevent's Semaphore, BoundedSemaphore, RLock,
 * Event, AsyncResult and Queue family; and the futures that stand for other work
 * (asyncio.gather's, concurrent.futures'), threading's Thread (for a
 * join()) and the child processes of subprocess and multiprocessing --
 * recognised by their class
 * (looked up in the target's own modules, so a user class that happens
 * to be called Lock is not one) and their state read from their own
 * fields: locked, set, value, qsize/maxsize, waiters, an RLock's owner
 * and count, a trio or anyio Lock's owning task, a gather's children done, a
 * future's state, a Thread's ident, a child's pid.
 */
#ifndef COROSCOPE_READERS_PRIMITIVES_H
#define COROSCOPE_READERS_PRIMITIVES_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "common/strbuf.h"
#include "readers/pyproc.h"

enum py_prim_kind {
	PY_PRIM_LOCK,
	PY_PRIM_RLOCK,
	PY_PRIM_EVENT,
	PY_PRIM_CONDITION,
	PY_PRIM_SEMAPHORE,
	PY_PRIM_BOUNDED_SEMAPHORE,
	PY_PRIM_QUEUE,
	PY_PRIM_BARRIER,
	/* importlib's per-module lock, held by the thread importing the
	 * module: owner is its ident */
	PY_PRIM_IMPORT_LOCK,
	/* Futures that stand for other work: what they wait for are
	 * edges of the graph, not a holder. */
	PY_PRIM_GATHER,          /* asyncio.gather's _GatheringFuture */
	PY_PRIM_CFUTURE,         /* concurrent.futures.Future */
	PY_PRIM_THREAD,          /* threading.Thread, being joined */
	/* multiprocessing.pool's ApplyResult, MapResult, IMapIterator:
	 * they wait for the pool's workers */
	PY_PRIM_POOL_RESULT,
	/* A child process waited for: subprocess.Popen,
	 * multiprocessing.Process, asyncio.subprocess.Process. */
	PY_PRIM_PROCESS,
	/* asyncio's StreamReader, waited on for data from its transport's
	 * socket (fd).  (The last kind: fuzz_readers.c reads every kind up
	 * to it.) */
	PY_PRIM_STREAM,
};

/* Whose class it is: the threading and queue modules (and
 * concurrent.futures, subprocess, multiprocessing), asyncio, trio, anyio,
 * tornado, gevent. */
enum py_prim_family {
	PY_PRIM_THREADING, PY_PRIM_ASYNCIO, PY_PRIM_TRIO, PY_PRIM_ANYIO,
	PY_PRIM_TORNADO, PY_PRIM_GEVENT,
	/* aiohttp's connector: a semaphore of its connections (kind
	 * PY_PRIM_SEMAPHORE), whose holders are the tasks using one */
	PY_PRIM_AIOHTTP,
};

struct py_prim {
	uint64_t addr;
	uint64_t type;
	enum py_prim_kind kind;
	const char *name;     /* "asyncio.Lock", "threading.RLock", ... */
	/* Its own class where that is a subclass of name's, as
	 * "module.Name" ("asyncio.PriorityQueue", "__main__.Worker"; for
	 * the pyproc's life; a target's text: escape it); else NULL. */
	const char *cls;
	enum py_prim_family family;
	/* State: -1 where unknown or not applicable. */
	int locked;           /* Lock, RLock, Condition (its lock) */
	int set;              /* Event */
	int64_t value;        /* Semaphore; Barrier: parties waiting */
	int64_t parties;      /* Barrier */
	int64_t qsize, maxsize;   /* queues */
	int64_t unfinished;   /* queues: items put and not yet task_done()
				 (what join() waits for) */
	int64_t waiters;      /* its own waiter count (getters + putters) */
	/* A Condition: the waiters of its lock (a notified waiter taking
	 * the lock back, a task entering `async with cond`), which its own
	 * count, as the library defines it, leaves out; asyncio's, trio's
	 * and anyio's (a threading lock keeps no count) */
	int64_t lock_waiters;
	/* StreamReader: its transport's socket's fd (asyncio's selector
	 * transports keep it as _sock_fd; -1 unknown: uvloop's), and
	 * whether the transport is a server's connection (1), a client's
	 * (0), or unknown (-1): a server waits for its clients by design */
	int64_t fd;
	int server_side;
	uint64_t owner;       /* RLock, import lock: owning thread ident, 0
				 none */
	uint64_t owner_task;  /* trio's and anyio's Lock: the task holding
				 it, 0 none */
	uint64_t owner_coro;  /* anyio's: that task's coroutine, 0 unknown */
	const char *owner_name;   /* trio's Lock: its owner task's name (the
				     pyproc's string cache), NULL unknown:
				     a task that has ended is no node */
	uint64_t owner_greenlet;  /* gevent's RLock: the greenlet holding
				     it, 0 none */
	uint64_t inner;       /* threading's Condition: its _lock;
				 gevent's RLock: its _block, when that is
				 gevent's Semaphore (whose links are the
				 RLock's waiters); its JoinableQueue: the
				 Event its join() waits on; else 0 */
	int64_t count;        /* RLock: times its owner entered it */
	int64_t children, done;   /* gather: its children, those done */
	uint64_t ident;       /* Thread: its thread's ident (_ident), 0 not
				 started or unknown */
	int daemon;           /* Thread: its daemon flag */
	int64_t pid;          /* Popen, Process: the child's pid */
	int exited;           /* ... 1 reaped (its pid may be another's
				 now), 0 not, -1 unknown */
	int64_t returncode;   /* ... once exited */
	int64_t left;         /* MapResult: chunks not yet done */
	const char *fstate;   /* concurrent future: "pending", "running",
				 "finished", "cancelled"; NULL unknown */
	/* aiohttp's connector: its connections in use (being made
	 * included), its limit and its limit per host (0: none); the
	 * others -1 */
	int64_t in_use, limit, limit_per_host;
	int scheduled;        /* ... run_coroutine_threadsafe()'s, whose
				 coroutine no task runs yet: its callback
				 waits in the loop's ready queue (set by
				 the wait-for graph) */
	uint64_t scheduled_coro;  /* ... that coroutine, when the heap walk
				     read it (a generator of py_async),
				     else 0 */
	int queued;           /* ... its job is in a ThreadPoolExecutor's
				 queue, waiting for the first of the pool's
				 workers (set by the wait-for graph) */
};

/* The classes, looked up once per snapshot. */
struct py_prim_types {
	uint64_t type[64];
	enum py_prim_kind kind[64];
	const char *name[64];
	enum py_prim_family family[64];
	size_t n;
	/* gevent's Cython objects, laid out per release
	 * (readers/primitives_gevent.c); NULL when gevent is not loaded or
	 * its release is not one verified. */
	const struct gevent_layout *gevent;
	uint64_t gevent_waiter;  /* gevent's Waiter class, whose greenlet
				    a Queue's getters and putters name */
	uint64_t gevent_greenlet;  /* gevent's Greenlet class */
	uint64_t gevent_multiwaiter;  /* its MultipleWaiter class */
	uint64_t gevent_joinable;     /* its JoinableQueue class */
	uint64_t gevent_channel;      /* its Channel class */
	int gevent_patched;   /* gevent has monkey-patched threading
				 (_thread.LockType is gevent.thread's) */
	uint64_t c_future;    /* _asyncio.Future, whose state is a C field */
	uint64_t deque;       /* collections.deque, whose length is counted */
	/* contextlib's _BaseExitStack (3.6: ExitStack): the managers a
	 * stack entered stay open in its _exit_callbacks */
	uint64_t exit_stack;
	/* aiohttp's ClientResponse, its request's context manager
	 * (_BaseRequestContextManager) and its Connection: what holds one
	 * of a connector's connections (py_aiohttp_connector_of()) */
	uint64_t aiohttp_response, aiohttp_request_cm, aiohttp_connection;
	/* each type judged once against them (every local of a program's
	 * frames may be asked): type -> 1 + which (0 none of them) */
	struct addrmap *aiohttp_verdicts;
	/* Each type's class, judged once (its MRO against each of the
	 * classes: a graph of 10,000 tasks awaiting futures of their own
	 * asks for 10,000 objects of one type): type -> index + 2, 1 for
	 * none.  NULL: judged every time. */
	struct addrmap *verdicts;
};

/* The classes of the target's modules; py_prim_types_release() frees
 * what it allocated. */
void py_prim_types_load(struct pyproc *py, struct py_prim_types *t);
void py_prim_types_release(struct py_prim_types *t);

/* Read obj as a primitive: 1 when it is one (out filled), 0 when not. */
int py_prim_read(struct pyproc *py, const struct py_prim_types *t,
		 uint64_t obj, struct py_prim *out);

/*
 * py_prim_read() of each object once, for one picture of a stopped
 * target: thousands of threads waiting on one Event read it once.  All
 * zero is an empty memo; py_prim_memo_release() frees it.
 */
struct py_prim_memo {
	struct addrmap seen;     /* address -> index + 1 in read; 0: none */
	struct py_prim *read;
	size_t n, alloc;
};

int py_prim_read_memo(struct pyproc *py, const struct py_prim_types *t,
		      struct py_prim_memo *m, uint64_t obj,
		      struct py_prim *out);
void py_prim_memo_release(struct py_prim_memo *m);

/*
 * The aiohttp connector one of whose connections obj holds: a
 * Connection not released, the ClientResponse reading from one, or the
 * context manager of `async with session.get(...)` around that
 * response; 0 for anything else.  *key: that connection's key.
 */
uint64_t py_aiohttp_connector_of(struct pyproc *py,
				 const struct py_prim_types *t, uint64_t obj,
				 uint64_t *key);
/*
 * Does a connection of `key` (that connection's ConnectionKey) keep a
 * waiter of connector p waiting?  Any connection does once its total
 * limit is reached; else it is its limit per host that binds, and only
 * one of the host and port of a key with waiters does.  (Its waiters
 * of other hosts then wait for no connection of that one.)
 */
int py_aiohttp_key_blocks(struct pyproc *py, const struct py_prim_types *t,
			  const struct py_prim *p, uint64_t key);

/*
 * The futures its waiters await, where it keeps them (tornado's
 * Semaphore, BoundedSemaphore, Condition and Queue, whose acquire(),
 * wait(), get() and put() return a future and no frame shows the wait;
 * a Lock's are its inner BoundedSemaphore's): up to max of them into
 * out (0 for a putter's that cannot be read); how many.
 */
size_t py_prim_waiter_futures(struct pyproc *py,
			      const struct py_prim_types *t,
			      const struct py_prim *p, uint64_t *out,
			      size_t max);

/*
 * The greenlets waiting on a primitive of gevent's: those whose switch
 * it keeps to call back (Event, AsyncResult, Semaphore, an RLock's inner
 * Semaphore) or whose Waiter it keeps (a Queue's getters and putters).
 * Up to max of them (their addresses greenlets' or not: the caller
 * keeps those it knows) into out; how many.  0 where gevent's layout is
 * not known.
 */
struct py_gevent_waiter {
	uint64_t greenlet;  /* 0 where unknown */
	/* waits through a MultipleWaiter (gevent.wait(), iwait(),
	 * joinall()): for all of what it waits on, or for the first of
	 * them (count=1), which the object does not say */
	int maybe_first_of;
};
size_t py_prim_waiter_greenlets(struct pyproc *py,
				const struct py_prim_types *t,
				const struct py_prim *p,
				struct py_gevent_waiter *out, size_t max);

/*
 * The greenlets waiting for gevent's Greenlet at `greenlet` to end (in
 * its join(), or joinall(), gevent.wait() or iwait() of it: its list of
 * callbacks keeps their switch or their Waiter's), up to max into out;
 * how many.  0 where gevent's layout is not known or it is no Greenlet.
 */
size_t py_gevent_joiners(struct pyproc *py, const struct py_prim_types *t,
			 uint64_t greenlet, struct py_gevent_waiter *out,
			 size_t max);

/* Row i of gevent's layouts (readers/primitives_gevent.c), NULL past
 * the last: for the fuzz harness, which has no gevent to ask. */
const struct gevent_layout *py_prim_gevent_row(size_t i);

/* Does holding it (with / async with) keep others out?  (Not tornado's
 * Condition, which has no lock.) */
int py_prim_is_lock(const struct py_prim *p);

/* Does `owner` name the thread owning it, by ident (threading's RLock,
 * importlib's module lock; not gevent's RLock, whose owner is a
 * greenlet)? */
int py_prim_thread_owned(const struct py_prim *p);

/* Is it a lock someone may hold now (locked, or its state unknown)?
 * A Condition's waiter waits for notify, not for its unlocked lock: no
 * "holder unknown" then. */
int py_prim_may_be_held(const struct py_prim *p);

/* A future (gather, concurrent future, a pool's result) or a Thread
 * being joined: it waits for other nodes. */
int py_prim_is_future(const struct py_prim *p);

/* Is the asyncio or concurrent future at obj done: 1 yes, 0 no, -1
 * unknown. */
int py_future_done(struct pyproc *py, const struct py_prim_types *t,
		   uint64_t obj);

/* "locked, 2 waiters", "not set", "value 0", "qsize 0 of 3",
 * "3 children, 1 done", "pending" ... */
void py_prim_state(const struct py_prim *p, struct strbuf *out);

#endif
