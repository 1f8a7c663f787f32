/*
 * What readers/tasks.c and readers/task_stacks.c share while they build
 * one py_async: the builder of a collection.  Not for other readers.
 */
#ifndef COROSCOPE_READERS_TASKS_INTERNAL_H
#define COROSCOPE_READERS_TASKS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "readers/aio_class.h"
#include "readers/awaiters.h"
#include "readers/tasks.h"

/* The fields of a task that both layouts provide. */
struct task_fields {
	int pending;
	/* Done with an exception set (else 0), and its future's log_tb
	 * flag: nothing asked for the exception yet. */
	uint64_t exception;
	int log_tb;
	uint64_t loop, coro, waiter, name;
	struct task_links links;  /* what its callbacks say (awaiters.h) */
	long coro_gen;            /* index of coro in gens, or -1 */
	int cancels;              /* as py_task.cancels_requested */
};

/* An object the GC walk found: a generator (kind) or a task (class). */
struct found {
	uint64_t addr;
	int what;                 /* enum py_code_kind or enum aio_class */
	int64_t interp_id;        /* -1 unknown */
};

struct builder {
	struct pyproc *py;
	const struct py_snapshot *snap;
	const struct py_stack_options *opt;
	struct aio_types types;
	struct awaiters awaiters;
	struct py_async *out;
	struct found *gens;       /* found by the GC walk */
	size_t ngen, gen_alloc;
	struct found *tasks;
	size_t ntask, task_alloc;
	struct found *jobs;       /* concurrent.futures Futures and
				     multiprocessing pools' results (what:
				     their enum aio_class), the first
				     MAX_JOBS_LOOKED_AT found */
	size_t njob, job_alloc;
	size_t jobs_more;         /* found past MAX_JOBS_LOOKED_AT */
	size_t gens_alloc;
	struct task_fields *fields; /* of out->tasks, in their order */
	long *next;               /* gens awaited (see index_awaiting()) */
	size_t nnext;
	size_t *chain;            /* build_stack()'s, kept for the next task */
	size_t chain_alloc;
	struct addrmap loop_tids; /* loop -> tid + 1 */
	struct addrmap frame_gens;/* generator frame -> gen index + 1, built
				     on first need (running chains) */
	int frame_gens_built;
	uint64_t interp;          /* the last interpreter the walk named */
	int64_t interp_id;        /* and its id */
};

/* The timers of the tasks' loops (readers/task_timers.c). */
void tasks_read_timers(struct builder *b);
/* The socket each waiting asyncio task reads through anyio's or
 * aiohttp's streams (readers/task_io.c): py_task.io_wait, .io_fd. */
void tasks_read_io(struct builder *b);
/* (readers/anyio_timers.c) Into out, each task of a that anyio's asyncio
 * backend keeps a TaskState for -> that TaskState: 1, or 0 when anyio
 * keeps none.  The first deadline of the cancel scopes task t is in,
 * in its loop's time: 0 with *when, or -1 for none. */
int tasks_anyio_states(struct pyproc *py, const struct py_async *a,
		       struct addrmap *out);
int tasks_anyio_timeout(struct pyproc *py, const struct addrmap *states,
			const struct py_task *t, double *when);

/* The task's name (a str, or a 3.12+ counter: "Task-N"); without one,
 * its coroutine's (generator coro_gen), else "Task".  In out->pool. */
char *tasks_task_name(struct builder *b, uint64_t name, long coro_gen);

/* Task found (fields f, of a task done with an exception) among
 * out->failed, its exception and traceback read (readers/
 * task_failures.c); tid: the thread of its loop. */
void tasks_note_failure(struct builder *b, const struct found *found,
			const struct task_fields *f, int tid);
/* Once every task was read: the executors' failed jobs among b->jobs
 * noted, the failed tasks' coroutines owned, and those a pending gather
 * will collect marked (gathered_by). */
void tasks_finish_failures(struct builder *b);


/* Lookups started this many generators (or tasks) ahead of their use. */
#define PREFETCH_AHEAD 16

/* Index of the generator at addr in out->gens, reading it if the GC walk
 * did not list it (a chain may lead to one it missed); -1 when addr is no
 * generator or cannot be read. */
long tasks_gen_at(struct builder *b, uint64_t addr, int64_t interp_id);

/* Each task's await chain (its stack), innermost first, and the owner of
 * each generator on it (readers/task_stacks.c). */
void tasks_build_stacks(struct builder *b);

#endif
