/*
 * trio's crossings between its tasks and threads: a task in
 * to_thread_run_sync() waits for the worker thread running its job (and
 * holds a token of its limiter), and a thread in from_thread.run()
 * waits for the system task running its call.
 */
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "common/util.h"
#include "common/banned.h"

/*
 * A trio task in to_thread_run_sync() waits for the worker thread whose
 * job is its contextvars_aware_worker_fn; once a thread runs it, the
 * task holds a token of its `limiter` (borrowed on behalf of a
 * placeholder of its own, which no `with` shows).
 */
static void link_trio_thread(struct wg_build *b, size_t node,
			     const struct py_frame *const *f, size_t n)
{
	uintptr_t worker;
	uint64_t job;
	size_t k;
	long obj;

	for (k = 0; k < n; k++) {
		const struct py_code *code = f[k]->code;

		if (!code->name || strcmp(code->name, "to_thread_run_sync") ||
		    !cs_ends_with(code->filename, "/trio/_threads.py"))
			continue;
		job = py_frame_local(b->py, f[k], "contextvars_aware_worker_fn");
		worker = job ? (uintptr_t)addrmap_get(&b->worker_futures, job,
						      NULL) : 0;
		if (!worker)
			return;
		wg_add_edge(b, WG_WAITS_FOR, node, worker - 1, NULL);
		obj = wg_object_node(b, py_frame_local(b->py, f[k], "limiter"));
		if (obj >= 0)
			wg_add_edge(b, WG_HOLDS, node, (size_t)obj, f[k]);
		return;
	}
}

/*
 * A thread in trio.from_thread.run(afn) waits for the system task trio
 * runs afn in, whose outermost coroutine (await_in_trio_thread_task)
 * puts afn's outcome to the queue `q` the thread waits on: a deadlock
 * through the call (the task waits for what the thread's caller holds)
 * is a cycle.
 */
static void link_trio_call(struct wg_build *b, size_t node,
			   const struct py_frame *const *f, size_t n)
{
	uintptr_t thread;
	uint64_t q;
	size_t k;

	for (k = 0; k < n; k++) {
		const struct py_code *code = f[k]->code;

		if (!code->name ||
		    strcmp(code->name, "await_in_trio_thread_task") ||
		    !cs_ends_with(code->filename, "/trio/_threads.py"))
			continue;
		q = py_frame_local(b->py, f[k], "q");
		thread = q ? (uintptr_t)addrmap_get(&b->trio_calls, q, NULL) :
			     0;
		if (thread)
			wg_add_edge(b, WG_WAITS_FOR, thread - 1, node, NULL);
		return;
	}
}

void wg_link_trio_threads(struct wg_build *b, size_t node,
			  const struct py_frame *const *f, size_t n)
{
	link_trio_thread(b, node, f, n);
	link_trio_call(b, node, f, n);
}

/*
 * Does trio task w wait in the exit of nursery (its `async with`'s
 * end, Nursery._nested_child_finished())?  Only there does a parent
 * wait for the children of its nursery: in the nursery's body it runs
 * on, or waits on anything else, beside them.
 */
int wg_in_nursery_exit(struct wg_build *b, const struct py_task *w,
		       uint64_t nursery)
{
	size_t k;

	for (k = 0; k < w->nstack; k++) {
		const struct py_gen *g = py_task_gen(b->a, w, k);

		if (g && g->has_frame && g->frame.code && g->frame.code->name &&
		    !strcmp(g->frame.code->name, "_nested_child_finished"))
			return py_frame_local(b->py, &g->frame, "self") ==
			       nursery;
	}
	return 0;
}
