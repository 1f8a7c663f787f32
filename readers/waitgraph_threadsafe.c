/*
 * asyncio.run_coroutine_threadsafe(coro, loop) returns a concurrent
 * future at once and only asks the loop to wrap coro in a task: its
 * `callback` (a closure over coro, future and loop) waits in the loop's
 * ready queue until the loop's thread runs it.  Until then no task is
 * behind the future, and what will complete it is that thread.  A
 * thread waiting for such a future while the loop cannot run -- the
 * loop's own thread, blocked in the wait (fut.result() inside a
 * coroutine) -- waits for itself.
 */
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/banned.h"

#define WG_MAX_LOOPS 64       /* event loops whose ready queue is read */
#define WG_MAX_READY 4096     /* handles of one ready queue looked at */

/* The thread node running a loop (its tasks' tid), or -1. */
static long thread_node(const struct wg_build *b, int tid)
{
	size_t i;

	for (i = 0; tid > 0 && i < b->snap->nthreads; i++)
		if (b->snap->threads[i].tid == tid)
			return (long)i;
	return -1;
}

/* The coroutine among a callback's closure values (coro, future, loop)
 * that the heap walk read, or 0. */
static uint64_t closure_coroutine(const struct wg_build *b,
				  const uint64_t *vals, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		uintptr_t i = (uintptr_t)addrmap_get(&b->a->gen_index,
						     vals[k], NULL);

		if (i && b->a->gens[i - 1].kind == PY_CODE_COROUTINE)
			return vals[k];
	}
	return 0;
}

/* Each run_coroutine_threadsafe() callback in loop's ready queue whose
 * future is one of `pending` (address -> node + 1): that future waits
 * for thread node `thread`. */
static void link_ready(struct wg_build *b, uint64_t loop, size_t thread,
		       const struct addrmap *pending, uint64_t *items)
{
	struct cs_err err;
	uint64_t ready = 0, vals[WG_MAX_CALLBACKS];
	size_t n = 0, i, k, m;
	uintptr_t fut;
	const struct py_code *code;

	cs_err_init(&err);
	if (pyobj_get_attr(b->py, loop, "_ready", &ready, &err) != 0 ||
	    !ready ||
	    pydeque_items(b->py, ready, items, WG_MAX_READY, &n, &err) < 0)
		return;
	for (i = 0; i < n && i < WG_MAX_READY; i++) {
		uint64_t cb = pyobj_own_or_0(b->py, items[i], "_callback");

		code = cb ? py_function_code(b->py, cb) : NULL;
		if (!py_code_is(code, "/asyncio/tasks.py", "callback"))
			continue;
		m = wg_closure_values(b->py, cb, "callback", vals,
				      WG_MAX_CALLBACKS);
		for (k = 0; k < m; k++) {
			struct py_prim *p;

			fut = (uintptr_t)addrmap_get(pending, vals[k], NULL);
			if (!fut)
				continue;
			p = &b->g->prims[b->g->nodes[fut - 1].index];
			p->scheduled = 1;
			p->scheduled_coro = closure_coroutine(b, vals, m);
			wg_add_edge(b, WG_WAITS_FOR, fut - 1, thread, NULL);
		}
	}
}

/* Add loop (run by thread tid) to loops[] unless there. */
static void add_loop(uint64_t *loops, int *tids, size_t *n, uint64_t loop,
		     int tid)
{
	size_t k;

	for (k = 0; k < *n && loops[k] != loop; k++)
		;
	if (k == *n && loop && tid > 0 && *n < WG_MAX_LOOPS) {
		loops[*n] = loop;
		tids[(*n)++] = tid;
	}
}

/* The loops threads run: `self` of a BaseEventLoop.run_forever() frame
 * on a thread's stack (a loop no task runs on, whose thread is stuck in
 * a callback, is found only so). */
static void loops_of_threads(struct wg_build *b, uint64_t *loops, int *tids,
			     size_t *n)
{
	size_t i, k;

	for (i = 0; i < b->snap->nthreads && *n < WG_MAX_LOOPS; i++) {
		const struct py_thread *t = &b->snap->threads[i];

		for (k = 0; k < t->nframes && k < WG_MAX_FRAMES; k++)
			if (py_code_is(t->frames[k].code,
				       "/asyncio/base_events.py",
				       "run_forever")) {
				add_loop(loops, tids, n,
					 py_frame_local(b->py, &t->frames[k],
							"self"), t->tid);
				break;
			}
	}
}

void wg_link_threadsafe(struct wg_build *b)
{
	const struct py_waitgraph *g = b->g;
	uint64_t loops[WG_MAX_LOOPS], *items;
	int tids[WG_MAX_LOOPS];
	struct addrmap pending;
	size_t i, nloops = 0;
	long thread;

	addrmap_init(&pending);
	/* the pending concurrent futures nothing is known to complete */
	for (i = 0; i < g->nnodes; i++) {
		const struct py_prim *p;

		if (g->nodes[i].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[i].index];
		if (p->kind == PY_PRIM_CFUTURE && p->fstate &&
		    !strcmp(p->fstate, "pending") && !p->queued)
			addrmap_put(&pending, p->addr, (void *)(uintptr_t)(i + 1));
	}
	for (i = 0; pending.len && b->a && i < b->a->ntasks &&
		    nloops < WG_MAX_LOOPS; i++)
		add_loop(loops, tids, &nloops, b->a->tasks[i].loop,
			 b->a->tasks[i].tid);
	if (pending.len && b->a)
		loops_of_threads(b, loops, tids, &nloops);
	items = nloops ? xcalloc(WG_MAX_READY, sizeof(*items)) : NULL;
	for (i = 0; i < nloops; i++) {
		thread = thread_node(b, tids[i]);
		if (thread >= 0)
			link_ready(b, loops[i], (size_t)thread, &pending, items);
	}
	free(items);
	addrmap_release(&pending);
}
