/*
 * The wait-for graph: one model of why a process is stuck.  Nodes are
 * threads, tasks (asyncio and trio: struct py_task), parked greenlets
 * and the objects they wait on (struct py_prim); edges say "waits for"
 * (a thread, task or greenlet to an object or to another task) and
 * "holds" (a unit to a lock it entered with `with` / `async with`, or
 * an RLock's owner).
 * Futures that stand for other work are objects too: a gather waits
 * for its pending children, a concurrent.futures future for the worker
 * thread running its job or the task of another loop that will complete
 * it (run_coroutine_threadsafe); asyncio's chained futures (wrap_future,
 * run_in_executor, to_thread) lead a task to that concurrent future.
 * Generators a task runs through another driver (tornado's Runner) are
 * recorded as drives and count as the task's innermost frames.
 *
 * It is plain data over the snapshot and the tasks it was built from
 * (it keeps indexes into them and borrows their frames), so the cycle
 * search (readers/cycles.c) runs over every kind at once: a deadlock of
 * two threads on two locks, a cycle of tasks awaiting each other and a
 * mix of both come out in the same form.
 */
#ifndef COROSCOPE_READERS_WAITGRAPH_H
#define COROSCOPE_READERS_WAITGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "readers/cycles.h"
#include "readers/greenlets.h"
#include "readers/primitives.h"
#include "readers/stacks.h"
#include "readers/tasks.h"

enum wg_kind { WG_THREAD, WG_TASK, WG_OBJECT, WG_GREENLET };

struct wg_node {
	enum wg_kind kind;
	size_t index;     /* into snap->threads, a->tasks, g->prims or the
			     greenlets' v */
	/* Threads and tasks: the innermost frame of the user's own code
	 * (not the standard library or site-packages), and the innermost
	 * frame of all; NULL when unknown.  Borrowed from the snapshot. */
	const struct py_frame *blame;
	const struct py_frame *inner;
	int idle;         /* a server's idle wait (accept, keep-alive) */
};

enum wg_edge_kind { WG_WAITS_FOR, WG_HOLDS };

struct wg_edge {
	enum wg_edge_kind kind;
	size_t from, to;  /* node indexes */
	const struct py_frame *at;  /* holds: the frame that entered the
				       block; NULL when not from a frame */
	int took_line;    /* holds: the line of at's with statement that
			     took it (at's file), 0 unknown */
	/* holds: only the RLock's owner ident names this thread (no
	 * frame of it entered the lock): it took it with a bare
	 * acquire(), or a thread that exited holding it left it its
	 * ident, which pthreads reuse */
	int by_ident;
	/* waits-for: 0, or one of `any` (two or more) choices its waiter
	 * goes on after the first of (asyncio.wait() or
	 * concurrent.futures.wait() with FIRST_COMPLETED, as_completed()),
	 * some maybe without a node; part of a cycle only where none of
	 * them can end the wait (any_blocked) */
	unsigned any;
	/* with any: the waiter may as well wait for all of them (gevent's
	 * wait() and joinall() wait through one MultipleWaiter, which does
	 * not say how many it waits for) */
	int maybe_all;
};

/* A generator run by a driver other than asyncio's Task: a tornado
 * gen.coroutine's Runner, whose result future the task awaits. */
struct wg_drive {
	size_t task;      /* a->tasks index */
	size_t gen;       /* a->gens index */
	const char *by;   /* "tornado" */
};

/* A generator-based context manager's generator (contextlib's
 * @contextmanager, @asynccontextmanager) suspended at its yield while a
 * `with` of a thread or task keeps it entered: it goes on only when
 * that block ends. */
struct wg_entered {
	size_t gen;                  /* a->gens index */
	size_t node;                 /* the thread or task */
	const struct py_frame *at;   /* the frame whose `with` it is */
	int line;                    /* that with's line, 0 unknown */
};

struct py_waitgraph {
	struct wg_node *nodes;
	size_t nnodes, anodes;
	struct wg_edge *edges;
	size_t nedges, aedges;
	struct py_prim *prims;
	size_t nprims, aprims;
	struct wg_drive *drives;    /* per task, outermost first */
	size_t ndrives, adrives;
	struct wg_entered *entered; /* the first `with` of each generator */
	size_t nentered, aentered;
	struct addrmap entered_index;  /* a->gens index + 1 -> entered + 1 */
	struct cycle_list cycles;   /* node indexes; objects included */
	char *test;                 /* the pytest node id being run, or NULL */
	struct addrmap index;       /* object address -> node index + 1 */
	/* Edge indexes by node, each node's in the order the edges were
	 * added (py_waitgraph_out(), py_waitgraph_in()): a report asks
	 * every node for its edges, and a scan of all edges each time is
	 * quadratic in the tasks of one big gather. */
	size_t *out_start, *out_edges;  /* out_start[nnodes + 1] */
	size_t *in_start, *in_edges;
	/* a->gens index + 1 -> its first drive's index + 1 (wg_finish) */
	struct addrmap drive_index;
	/* (kind, index) -> the first such node's index + 1: reports ask
	 * for the node of each task. */
	struct addrmap kind_index;
	/* Per node, or NULL (no "first of" waits): 1 where the graph
	 * shows it cannot go on (readers/waitgraph_any.c), so that none of
	 * its "first of" waits (the edges with any) can end: those edges
	 * then count in cycles. */
	unsigned char *any_blocked;
};

/*
 * Drop from a (the tasks the graph was built from) the await cycles
 * that pass through a "first of" wait some other choice may end
 * (readers/waitgraph_any.c): a cycle the graph does not have.
 */
void py_waitgraph_keep_await_cycles(const struct py_waitgraph *g,
				    struct py_async *a);

/*
 * Build the graph.  The target must be stopped (or the result is as racy
 * as the snapshot).  A primitive or frame that cannot be read is left
 * out; only running out of memory is an error.
 */
int py_waitgraph_build(struct pyproc *py, const struct py_snapshot *snap,
		       const struct py_async *a,
		       const struct py_greenlets *gl, struct py_waitgraph *g,
		       struct cs_err *err);
void py_waitgraph_init(struct py_waitgraph *g);
void py_waitgraph_release(struct py_waitgraph *g);

/* The node of a thread (snap index), task (a->tasks index) or object
 * (g->prims index), or -1. */
long py_waitgraph_node_of(const struct py_waitgraph *g, enum wg_kind kind,
			  size_t index);
/* A new node (its frames unknown, not idle), indexed for
 * py_waitgraph_node_of(): its index in g->nodes. */
size_t py_waitgraph_add_node(struct py_waitgraph *g, enum wg_kind kind,
			     size_t index);
/* A node for each of nthreads threads (snap indexes), then for each of
 * ntasks tasks (a->tasks indexes), in room made for them all at once:
 * the index of the first task's node. */
size_t py_waitgraph_add_units(struct py_waitgraph *g, size_t nthreads,
			      size_t ntasks);

/* The worker thread node `node` waits for, directly (anyio's
 * to_thread) or through the concurrent futures it waits on (an
 * executor's job: run_in_executor, to_thread, wrap_future), or -1. */
long py_waitgraph_worker(const struct py_waitgraph *g, size_t node);
/* The concurrent future node `node` waits on directly, where no worker
 * thread of the process runs its job (py_waitgraph_worker() finds none:
 * a process pool's), or -1. */
long py_waitgraph_cfuture_elsewhere(const struct py_waitgraph *g,
				    size_t node);
/* The task node that a concurrent future node `node` waits on directly
 * will complete, or -1: run_coroutine_threadsafe()'s task on another
 * loop, awaited through wrap_future() (asyncio's _chain_future()). */
long py_waitgraph_task_behind_cfuture(const struct py_waitgraph *g,
				      size_t node);

/* Does node wait for anything the graph knows (a waits-for edge out)? */
int py_waitgraph_waits(const struct py_waitgraph *g, size_t node);

/* The `with` keeping generator gen (a->gens index) entered, or NULL. */
const struct wg_entered *py_waitgraph_entered_of(const struct py_waitgraph *g,
						 size_t gen);

/* The drive of generator gen (a->gens index), or NULL. */
const struct wg_drive *py_waitgraph_drive_of(const struct py_waitgraph *g,
					     size_t gen);

/* The edges leaving (entering) node: *n indexes into g->edges, in the
 * order the edges were added. */
const size_t *py_waitgraph_out(const struct py_waitgraph *g, size_t node,
			       size_t *n);
const size_t *py_waitgraph_in(const struct py_waitgraph *g, size_t node,
			      size_t *n);

/* Holders of an object node (their node indexes), at most max. */
size_t py_waitgraph_holders(const struct py_waitgraph *g, size_t obj,
			    size_t *out, size_t max);
/* Waiters on a node (object or task), at most max; returns the count. */
size_t py_waitgraph_waiters(const struct py_waitgraph *g, size_t node,
			    size_t *out, size_t max);

#endif
