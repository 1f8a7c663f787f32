/*
 * The "second stack": every generator, coroutine and async generator of
 * the process (found by walking the GC lists) and every pending asyncio
 * task with its coroutine chain, what it awaits, and who awaits it.
 *
 * Tasks are recognised by type: _asyncio.Task and its subclasses (C
 * layout, offsets from the table) and asyncio.tasks._PyTask (attributes
 * read from the instance dict).  Who-awaits-whom comes from
 * fut_awaited_by where the version has it (3.14) and otherwise from the
 * futures' callbacks: a task's wakeup method, gather's and shield's
 * closures, asyncio.wait's and wait_for's callbacks, and TaskGroup's
 * bound _on_task_done (see task_awaiters()).
 */
#ifndef COROSCOPE_READERS_TASKS_H
#define COROSCOPE_READERS_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "common/arena.h"
#include "readers/gc.h"
#include "readers/gens.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"

/* Coroutines in one await chain: a bound on a walk through memory a
 * target controls, far past any recursion a program means (3.12 on
 * runs Python calls without C stack; a 20,000-deep chain was met). */
#define PY_MAX_CHAIN ((size_t)1 << 20)

/*
 * A loop check for a chain being followed, one generator index at a
 * time: a scan while it is short (real chains are, and a set per task
 * costs allocations), a set past that.
 */
#define PY_CHAIN_SCAN 32
struct py_chain_seen {
	long first[PY_CHAIN_SCAN];
	size_t n;
	struct addrmap set;      /* index + 1, once n passed PY_CHAIN_SCAN */
};
void py_chain_seen_init(struct py_chain_seen *s);
/* 0 when idx (>= 0) was added before: the chain loops. */
int py_chain_seen_add(struct py_chain_seen *s, long idx);
void py_chain_seen_release(struct py_chain_seen *s);

struct py_task {
	uint64_t addr;
	uint64_t loop;
	uint64_t coro;
	char *name;               /* in py_async.pool */
	int running;              /* its coroutine is executing now */
	int tid;                  /* thread running its loop, 0 unknown */
	/* Running: 1 + the place of its innermost coroutine's frame in
	 * its thread's frames (innermost 0); 0 unknown.  Of two tasks
	 * whose steps run on one thread (a loop run again inside a step,
	 * nest_asyncio's), the one further in has the lesser. */
	size_t run_at;
	/* Running, and its thread waits for events in its own loop, run
	 * again inside the step (a selector's select() under a _run_once()
	 * whose self is that loop: nest_asyncio's run_until_complete()):
	 * the step does not hold its loop up. */
	int loop_waits;
	uint64_t waiter;          /* _fut_waiter, 0 when none */
	/* cancel() calls on it that no uncancel() undid (3.11+; -1 not
	 * known): pending after one, it goes on (it caught the
	 * CancelledError, or cleans up before it ends) */
	int cancels_requested;
	const char *waiter_type;  /* type name of the waiter */
	size_t *stack;            /* indexes into py_async.gens, innermost
				     first; in py_async.pool */
	size_t nstack;
	/* 1 + the index of a task whose stack has the same frames as this
	 * one's (the same code objects, names and lines), found while the
	 * stacks were built (alike tasks mostly come in a row); 0 when none
	 * was looked for.  Tasks with the same nonzero value have the same
	 * frames; others may have them too. */
	size_t frames_like;
	uint64_t *awaited_by;     /* tasks blocked on this one; in
				     py_async.pool */
	size_t nawaited_by;
	const char *framework;    /* NULL for asyncio, "trio" (readers/trio.c) */
	uint64_t nursery;         /* trio: the nursery it runs in, or 0 */
	int64_t interp_id;        /* its interpreter, -1 unknown */
	int interp_main;          /* 1 main, 0 not, -1 unknown */
	/* Timers of its loop (readers/task_timers.c), each due at a time
	 * of the loop's time() (seconds): sleeps, its waiter is
	 * asyncio.sleep()'s future, completed at sleep_until; times_out,
	 * a timeout (asyncio.timeout(), wait_for(), wait()'s) ends its wait
	 * at timeout_at.  Each PY_TIMER_MONOTONIC where the loop's time()
	 * is time.monotonic() (its class keeps BaseEventLoop.time),
	 * PY_TIMER_OWN_CLOCK where the loop has a clock of its own,
	 * PY_TIMER_NONE for no such timer. */
	int sleeps, times_out;
	double sleep_until, timeout_at;
	/* Its loop keeps no _scheduled list to read (uvloop's), and its
	 * side told nothing either way: a sleep's handle not recognised
	 * (a uvloop release laid out otherwise).  Not set where the loop's
	 * timers were read, nor where its handle had fired: asleep there
	 * with no timer means its loop has not run since. */
	int timers_unread;
	/* trio (readers/trio_timers.c): the CancelScope whose deadline is
	 * the sleep's, else the first timeout's; 0 for none.  trio's
	 * times, less its clock's offset where that is the default
	 * SystemClock's (time.monotonic() then). */
	uint64_t timer_scope;
	/* Parked on a file descriptor, to read or to write (PY_IO_NONE:
	 * not known), io_fd: trio's (readers/trio_io.c), and asyncio tasks
	 * reading through anyio's or aiohttp's streams (readers/
	 * task_io.c); io_call: the trio socket method it is in ("recv"; in
	 * py_async.pool), or NULL. */
	int io_wait;
	int64_t io_fd;
	const char *io_call;
};

enum { PY_IO_NONE, PY_IO_READ, PY_IO_WRITE };

enum { PY_TIMER_NONE, PY_TIMER_MONOTONIC, PY_TIMER_OWN_CLOCK };

/* A due time from float object v (finite, within what a clock keeps):
 * 0 read into *out, or -1 (no float, inf: no timer). */
int py_timer_due(struct pyproc *py, uint64_t v, double *out);

/* The clock of a timeout on the task's wait (as the dump says it: none
 * on a task that awaits nothing, running). */
static inline int py_task_wait_timeout(const struct py_task *t)
{
	return t->waiter || t->timer_scope ? t->times_out : PY_TIMER_NONE;
}

/* A multiprocessing lock or semaphore (readers/semlocks.h). */
struct py_semlock {
	uint64_t addr;        /* the multiprocessing.synchronize object */
	uint64_t semlock;     /* its _multiprocessing.SemLock */
	const char *name;     /* "multiprocessing.Lock", ... (static) */
	int owned;            /* a Lock or an RLock, which one thread holds
				 (a semaphore's units are acquired in one
				 process and released in another by
				 design: its count names no holder) */
	uint64_t handle;      /* its semaphore (sem_t) in this process */
	uint64_t last_tid;    /* the ident of the thread that acquired it
				 last */
	int count;            /* acquires less releases, this process's */
	int maxvalue;
	int recursive;        /* an RLock: count is its owner's depth */
	/* The semaphore's value, its units left (0: a Lock held), read
	 * in its sem_t (glibc's first 32-bit word); -1 unreadable. */
	int64_t value;
};

/*
 * Where an exception was raised, from its traceback (py_exception_sites
 * below): each a traceback entry's frame, its code and line; code NULL
 * where there is none.
 */
struct py_exc_sites {
	struct py_frame at;       /* the innermost entry */
	struct py_frame own;      /* the innermost in the program's own
				     code (readers/usercode.h) */
	struct py_frame outer;    /* the first entry after the first
				     worker's (concurrent.futures'
				     _WorkItem.run(), a multiprocessing
				     pool's worker()) outside their files:
				     a job's function; none without one */
	int reraised;             /* an entry in concurrent/futures/
				     _base.py or multiprocessing/pool.py's
				     get() before the worker's: a Future's
				     result() or a pool result's get()
				     raised it again */
	int cut;                  /* longer than followed: none known */
};

/* One of the exceptions in a failed task's exception group (a
 * BaseExceptionGroup, 3.11+): what it is (a repr, in py_async.pool)
 * and where it was raised. */
struct py_exc_leaf {
	char *exc_repr;
	struct py_exc_sites sites;
};

/* Leaves of a group kept, and groups in groups followed, at most. */
#define PY_MAX_GROUP_LEAVES 3
#define PY_MAX_GROUP_DEPTH 8

/* A traceback entry known only as text (a process pool's job's, from
 * its worker): file NULL when none; strings in py_async.pool. */
struct py_text_frame {
	char *file, *function, *source;
	long line;
};

/*
 * A task that ended by raising, or an executor's job (readers/
 * task_failures.c): done, with an exception set.  Most tasks are freed
 * at once, the loop's "Task exception was never retrieved" logged then;
 * one still referenced (a variable, a list of tasks) keeps its failure
 * silent while what waits for its work waits forever.  A job's Future
 * logs nothing ever.
 */
#define PY_MAX_FAILED_TASKS 64
/* concurrent.futures Futures and pool results looked at: one dict
 * lookup or two each. */
#define MAX_JOBS_LOOKED_AT 65536
enum { PY_FAILED_TASK, PY_FAILED_JOB, PY_FAILED_POOL_JOB };
struct py_failed_task {
	/* PY_FAILED_TASK: an asyncio task; PY_FAILED_JOB: an executor's
	 * job, its concurrent.futures Future at addr; PY_FAILED_POOL_JOB: a
	 * multiprocessing pool's, its ApplyResult at addr; a job with no
	 * loop, thread or name but its function's */
	int job;
	uint64_t addr;
	uint64_t loop;
	uint64_t exception;
	uint64_t coro;            /* its coroutine, 0 where the task let go
				     of it once done (3.12 on) */
	char *name;               /* in py_async.pool; a job's function,
				     "fetch()", or NULL when not known */
	int tid;                  /* thread running its loop, 0 unknown */
	/* Something asked for its exception (await, result(), exception(),
	 * a gather's return_exceptions): the future's log_tb flag cleared.
	 * A job: its result() raised it again (sites.reraised), or it has a
	 * done callback (asyncio's run_in_executor() chains its own future
	 * so, which a task awaits). */
	int retrieved;
	/* A child of a gather still waiting for its others (the task
	 * awaiting that gather, else 0): the gather asks for the
	 * exception once they end. */
	uint64_t gathered_by;
	char *exc_repr;           /* "ValueError('boom')", args cut as
				     readers/repr.h cuts them; in the pool */
	struct py_exc_sites sites;
	/* A process pool's job, its exception with no traceback: where its
	 * worker says it raised (the _RemoteTraceback's text), the
	 * innermost entry and the innermost in the program's own code
	 * (file NULL: none); remote_cut: the text was longer than read. */
	struct py_text_frame remote_at, remote_own;
	int remote_cut;
	/* Its exception is a group (a TaskGroup's, a trio nursery's): the
	 * exceptions in it that are no group, the first ones in the
	 * group's order (groups in it followed), with how many more (of
	 * those visited: readers/exc_group.c bounds the walk). */
	int group;
	struct py_exc_leaf leaves[PY_MAX_GROUP_LEAVES];
	size_t nleaves, leaves_more;
};

/* Where exception exc was raised, from its traceback, into *out. */
void py_exception_sites(struct pyproc *py, uint64_t exc,
			struct py_exc_sites *out);

/* When exc is an exception group: t->group set, and its leaves, their
 * reprs in pool (readers/exc_group.c); else nothing. */
void py_exc_group_leaves(struct pyproc *py, uint64_t exc, struct arena *pool,
			 struct py_failed_task *t);

/* An object of readers/waitables.h and its kind (enum py_prim_kind). */
struct py_waitable {
	uint64_t addr;
	int kind;
};

struct py_async {
	struct py_gen *gens;
	size_t ngens;
	/* Generators whose task is set (py_async_set_owner() counts
	 * them): a report need not look for the others when it equals
	 * ngens. */
	size_t ngens_owned;
	struct py_task *tasks;
	size_t ntasks;
	uint64_t **cycles;        /* each a list of task addresses */
	size_t *cycle_len;
	size_t ncycles;
	struct addrmap gen_index; /* gen address -> index + 1 */
	struct addrmap task_index;/* task address -> index + 1 */
	struct arena pool;        /* the tasks' names, stacks, awaiters */
	/* The reader of part of gens, or NULL (readers/gens_many.h). */
	struct pyproc *helper;
	/* Objects whose waiters only their futures tell (tornado's locks
	 * and queues: readers/waitables.h), from the same heap walk;
	 * waitables_cut: there were more than it keeps. */
	struct py_waitable *waitables;
	size_t nwaitables;
	int waitables_cut;
	/* multiprocessing's locks and semaphores (readers/semlocks.h),
	 * from the same walk; semlocks_cut: more than it keeps. */
	struct py_semlock *semlocks;
	size_t nsemlocks;
	int semlocks_cut;
	/* multiprocessing.process._current_process: 1 a multiprocessing
	 * child's Process (its start reset every SemLock's count), 0 a
	 * _MainProcess (the program's own, or one os.fork() made, whose
	 * counts are the parent's copies), -1 unknown */
	int mp_child;
	/* Failed tasks and jobs still referenced, PY_MAX_FAILED_TASKS at
	 * most, in the walk's order (the jobs after the tasks), those
	 * whose exception nothing retrieved kept before the others;
	 * failed_more: those left out.  None in a child multiprocessing
	 * forked, whose are its parent's copies. */
	struct py_failed_task *failed;
	size_t nfailed, failed_more;
	/* Futures and pool results past the first MAX_JOBS_LOOKED_AT the
	 * heap walk found, not looked at for failed jobs. */
	size_t jobs_unread;
	/* Await chains (tasks', trio tasks') cut at PY_MAX_CHAIN. */
	size_t chains_cut;
	/* 1: the process is a child multiprocessing forked (a process
	 * pool's worker, a Process of the "fork" method) and runs no event
	 * loop of its own: every task here is a copy of its parent's,
	 * which it will never run (the child leaves through os._exit()).
	 * Its thread's frames outside the fork are the parent's too; a
	 * task of them "running" is the parent's task that forked. */
	int copied_at_fork;
};

/* Coroutine k of task t's await chain (innermost first), or NULL when
 * k is past its end or the chain names no generator read. */
static inline const struct py_gen *py_task_gen(const struct py_async *a,
					       const struct py_task *t,
					       size_t k)
{
	return k < t->nstack && t->stack[k] < a->ngens ?
	       &a->gens[t->stack[k]] : NULL;
}

/* Give generator gen the task at address task (nonzero) as its owner,
 * counting it in ngens_owned when it had none. */
static inline void py_async_set_owner(struct py_async *a, size_t gen,
				      uint64_t task)
{
	if (!task)
		return;
	a->ngens_owned += !a->gens[gen].task;
	a->gens[gen].task = task;
}

/*
 * Walk the heap and build the tasks and generators.  snap gives the
 * threads (to name the thread of each loop).  The target must be stopped
 * (or the result is racy, as with --no-block).
 */
int py_async_take(struct pyproc *py, const struct py_snapshot *snap,
		  const struct py_stack_options *opt, struct py_async *out,
		  struct cs_err *err);
/* The same, with the same heap walk also serving the nalso visitors in
 * also (other readers' scans: greenlets, trio tasks). */
int py_async_take_with(struct pyproc *py, const struct py_snapshot *snap,
		       const struct py_stack_options *opt,
		       const struct py_gc_visit *also, size_t nalso,
		       struct py_async *out, struct cs_err *err);
void py_async_release(struct py_async *a);

/* Short type name: the part of tp_name after the last dot. */
const char *py_short_type_name(const char *tp_name);

/* The task at addr, or NULL. */
const struct py_task *py_async_task(const struct py_async *a, uint64_t addr);
/* The task whose coroutine runs on thread tid now (a step of its
 * loop's; of steps run inside one another, the innermost), or NULL
 * (always, in a child that copied_at_fork). */
const struct py_task *py_async_running_task(const struct py_async *a,
					    int tid);

#endif
