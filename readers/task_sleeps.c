/*
 * asyncio.sleep(delay) awaits a future that a timer completes:
 * loop.call_later(delay, futures._set_result_unless_cancelled, future,
 * result) puts a TimerHandle on the loop's _scheduled heap, due at its
 * _when in the loop's time().  A task whose waiter is such a future
 * sleeps until then, the same in every version from 3.6 on.  (A loop
 * that keeps its timers elsewhere -- uvloop's, in C -- has no
 * _scheduled: its tasks say nothing of it.)
 */
#include "readers/tasks_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Loops whose timers are read, and timers read of each: a bound on a
 * walk through lists the target controls, past what a program has
 * (a busy server has hundreds of timers). */
#define SLEEP_MAX_LOOPS 64
#define SLEEP_MAX_TIMERS 65536

/* The loop's time() is time.monotonic(): its class keeps
 * BaseEventLoop.time (an instance attribute or an override would be
 * found first). */
static int monotonic_clock(struct pyproc *py, uint64_t loop)
{
	uint64_t fn = pyobj_lookup_or_0(py, loop, "time");
	const struct py_code *code = fn ? py_function_code(py, fn) : NULL;

	return py_code_is(code, "/asyncio/base_events.py", "time");
}

/* A float attribute of a handle (its type checked: _when could be
 * anything a loop of its own computes), 0 read or -1. */
static int handle_float(struct pyproc *py, uint64_t h, const char *name,
			double *out)
{
	uint64_t v = pyobj_own_or_0(py, h, name), type;
	const char *tn;

	if (!v || pyobj_read_type(py, v, &type, NULL) < 0)
		return -1;
	tn = py_type_name_cached(py, type);
	if (!tn || strcmp(tn, "float") != 0 ||
	    pyfloat_read(py, v, out, NULL) < 0 || !isfinite(*out))
		return -1;
	return 0;
}

/*
 * The future timer h completes when it is asyncio.sleep()'s (not
 * cancelled), with its due time in *when; else 0.  `sleep_cb` is the
 * callback found to be _set_result_unless_cancelled so far (one
 * function object: each timer compares its address first).
 */
static uint64_t sleep_future(struct pyproc *py, uint64_t h,
			     uint64_t *sleep_cb, double *when)
{
	uint64_t cb = pyobj_own_or_0(py, h, "_callback");
	uint64_t args, fut, cancelled;
	size_t n = 0;
	int64_t c = 0;

	if (!cb)
		return 0;
	if (cb != *sleep_cb) {
		if (!py_code_is(py_function_code(py, cb), "/asyncio/futures.py",
				"_set_result_unless_cancelled"))
			return 0;
		*sleep_cb = cb;
	}
	cancelled = pyobj_own_or_0(py, h, "_cancelled");
	if (cancelled && pyobj_int_i64(py, cancelled, &c, NULL) == 0 && c)
		return 0;
	args = pyobj_own_or_0(py, h, "_args");
	if (!args || pyseq_items(py, args, &fut, 1, &n, NULL) < 0 || n < 1 ||
	    !fut || handle_float(py, h, "_when", when) < 0)
		return 0;
	return fut;
}

/* The sleeping tasks of one loop among its timers: each whose waiter a
 * timer of the loop completes.  waiters is made at the first loop with
 * timers (a loop without, as most dumps' are, costs two lookups). */
static void loop_sleeps(struct builder *b, uint64_t loop, uint64_t sched,
			size_t n, struct addrmap *waiters, int *indexed)
{
	struct pyproc *py = b->py;
	struct py_async *a = b->out;
	uint64_t *items, sleep_cb = 0, fut;
	int clock = monotonic_clock(py, loop) ? PY_SLEEP_MONOTONIC :
		    PY_SLEEP_OWN_CLOCK;
	double when;
	size_t i;

	if (!*indexed) {
		for (i = 0; i < a->ntasks; i++)
			if (a->tasks[i].waiter && !a->tasks[i].framework)
				addrmap_put(waiters, a->tasks[i].waiter,
					    (void *)(uintptr_t)(i + 1));
		*indexed = 1;
	}
	if (n > SLEEP_MAX_TIMERS)
		n = SLEEP_MAX_TIMERS;
	items = xmallocarray(n, sizeof(*items));
	if (pyseq_items(py, sched, items, n, &n, NULL) < 0)
		n = 0;
	for (i = 0; i < n && i < SLEEP_MAX_TIMERS; i++) {
		uintptr_t k;
		struct py_task *t;

		fut = sleep_future(py, items[i], &sleep_cb, &when);
		k = fut ? (uintptr_t)addrmap_get(waiters, fut, NULL) : 0;
		if (!k)
			continue;
		t = &a->tasks[k - 1];
		if (t->loop != loop)
			continue;
		t->sleeps = clock;
		t->sleep_until = when;
	}
	free(items);
}

void tasks_read_sleeps(struct builder *b)
{
	struct py_async *a = b->out;
	uint64_t loops[SLEEP_MAX_LOOPS], sched;
	struct addrmap waiters;   /* a task's waiter -> its index + 1 */
	size_t i, k, n, nloops = 0;
	int indexed = 0;

	/* The loops of tasks that wait (alike tasks come in a row, on
	 * one loop: the last one found is compared first). */
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		if (!t->waiter || !t->loop || t->framework ||
		    (nloops && loops[nloops - 1] == t->loop))
			continue;
		for (k = 0; k < nloops && loops[k] != t->loop; k++)
			;
		if (k == nloops && nloops < SLEEP_MAX_LOOPS)
			loops[nloops++] = t->loop;
	}
	addrmap_init(&waiters);
	for (k = 0; k < nloops; k++) {
		sched = 0;
		n = 0;
		if (pyobj_get_attr(b->py, loops[k], "_scheduled", &sched,
				   NULL) == 0 && sched &&
		    pyseq_items(b->py, sched, NULL, 0, &n, NULL) == 0 && n)
			loop_sleeps(b, loops[k], sched, n, &waiters, &indexed);
	}
	addrmap_release(&waiters);
}
