/*
 * The timers on a task's loop that say when it goes on: each a
 * TimerHandle on the loop's _scheduled heap, due at its _when in the
 * loop's time(), the same in every version from 3.6 on.
 *
 * - asyncio.sleep(delay) awaits a future that
 *   loop.call_later(delay, futures._set_result_unless_cancelled, future,
 *   result) completes: a task whose waiter is that future sleeps until
 *   then.
 * - asyncio.wait_for() up to 3.11, and asyncio.wait() with a timeout,
 *   await a waiter future that call_later(timeout, _release_waiter,
 *   waiter) releases: the task awaiting it times out then.
 * - asyncio.timeout() (3.11+, and wait_for() from 3.12) schedules the
 *   bound method _on_timeout of a Timeout, whose _task it cancels then.
 *
 * A loop that keeps its timers elsewhere (uvloop's, in C) has no
 * _scheduled: a task there is read from its side (frame_timers()
 * below).  anyio's cancel scopes are read from the task's side on any
 * loop (readers/anyio_timers.c).  So is a task asleep whose timer its loop took off the heap
 * to run and then blocked.
 */
#include "readers/tasks_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/stacks.h"
#include "readers/withblocks.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Loops whose timers are read, and timers read of each: a bound on a
 * walk through lists the target controls, past what a program has
 * (a busy server has hundreds of timers). */
#define TIMER_MAX_LOOPS 64
#define TIMER_MAX 65536

enum timer_kind { TIMER_OTHER, TIMER_SLEEP, TIMER_RELEASE, TIMER_TIMEOUT };

/* The functions met so far as each kind's callback: one function object
 * each (a bound method's im_func for a timeout), so that most timers
 * are told by an address compared. */
struct timer_cbs {
	uint64_t fn[TIMER_TIMEOUT + 1];
};

/* The loop's time() is time.monotonic(): its class keeps
 * BaseEventLoop.time (an instance attribute or an override would be
 * found first). */
static int monotonic_clock(struct pyproc *py, uint64_t loop)
{
	uint64_t fn = pyobj_lookup_or_0(py, loop, "time");
	const struct py_code *code = fn ? py_function_code(py, fn) : NULL;

	return py_code_is(code, "/asyncio/base_events.py", "time");
}

/* A loop's time() is seconds since some start (boot, for the
 * monotonic clock): a due time beyond this is no time it keeps. */
#define TIMER_MAX_SECONDS 1e12

/* (readers/tasks.h; its type checked: _when could be anything a loop
 * of its own computes) */
int py_timer_due(struct pyproc *py, uint64_t v, double *out)
{
	uint64_t type;
	const char *tn;

	if (!v || pyobj_read_type(py, v, &type, NULL) < 0)
		return -1;
	/* (by name where the executable does not name PyFloat_Type) */
	tn = py->types.float_ ? NULL : py_type_name_cached(py, type);
	if (py->types.float_ ? type != py->types.float_ :
	    !tn || strcmp(tn, "float") != 0)
		return -1;
	if (pyfloat_read(py, v, out, NULL) < 0 || !isfinite(*out) ||
	    fabs(*out) > TIMER_MAX_SECONDS)
		return -1;
	return 0;
}

/* A handle's float attribute `name`, as py_timer_due(). */
static int handle_float(struct pyproc *py, uint64_t h, const char *name,
			double *out)
{
	return py_timer_due(py, pyobj_own_or_0(py, h, name), out);
}

/* Which kind of timer calls fn (for a bound method, its function). */
static enum timer_kind kind_of(struct pyproc *py, uint64_t fn,
			       struct timer_cbs *cbs)
{
	const struct py_code *code;
	int k;

	for (k = TIMER_SLEEP; k <= TIMER_TIMEOUT; k++)
		if (fn && fn == cbs->fn[k])
			return (enum timer_kind)k;
	code = fn ? py_function_code(py, fn) : NULL;
	if (py_code_is(code, "/asyncio/futures.py",
		       "_set_result_unless_cancelled"))
		k = TIMER_SLEEP;
	else if (py_code_is(code, "/asyncio/tasks.py", "_release_waiter"))
		k = TIMER_RELEASE;
	else if (py_code_is(code, "/asyncio/timeouts.py", "_on_timeout"))
		k = TIMER_TIMEOUT;
	else
		return TIMER_OTHER;
	cbs->fn[k] = fn;
	return (enum timer_kind)k;
}

/*
 * What timer h is (not cancelled), with its due time in *when and in
 * *what the future it completes (a sleep's, a waiter released) or the
 * task it cancels (a timeout's); TIMER_OTHER for anything else.
 */
static enum timer_kind read_timer(struct pyproc *py, uint64_t h,
				  struct timer_cbs *cbs, uint64_t *what,
				  double *when)
{
	uint64_t cb = pyobj_own_or_0(py, h, "_callback");
	uint64_t args, self = 0, fn = cb, cancelled, type;
	enum timer_kind k;
	size_t n = 0;
	int64_t c = 0;
	const char *tn;

	*what = 0;
	if (!cb)
		return TIMER_OTHER;
	/* A function met before needs no type read (a sleep's, a waiter's
	 * release); anything else may be a bound method (a timeout's). */
	if (cb != cbs->fn[TIMER_SLEEP] && cb != cbs->fn[TIMER_RELEASE]) {
		if (pyobj_read_type(py, cb, &type, NULL) < 0)
			return TIMER_OTHER;
		tn = py_type_name_cached(py, type);
		if (tn && !strcmp(tn, "method") &&
		    py_bound_method(py, cb, &fn, &self) < 0)
			return TIMER_OTHER;
	}
	k = kind_of(py, fn, cbs);
	if (k == TIMER_OTHER || (k == TIMER_TIMEOUT) != (self != 0))
		return TIMER_OTHER;
	/* (Handle.__init__ sets it: one that cannot be read is no timer
	 * to trust) */
	cancelled = pyobj_own_or_0(py, h, "_cancelled");
	if (!cancelled || pyobj_int_i64(py, cancelled, &c, NULL) != 0 || c ||
	    handle_float(py, h, "_when", when) < 0)
		return TIMER_OTHER;
	if (k == TIMER_TIMEOUT) {
		*what = pyobj_lookup_or_0(py, self, "_task");
	} else {
		args = pyobj_own_or_0(py, h, "_args");
		if (!args || pyseq_items(py, args, what, 1, &n, NULL) < 0 ||
		    n < 1)
			*what = 0;
	}
	return *what ? k : TIMER_OTHER;
}

/* The tasks of one loop whose timers the loop keeps: each whose waiter
 * a timer completes, or whom a timer cancels.  The index of waiters (a
 * task's waiter -> its index + 1) is made at the first loop with timers
 * (a loop without, as most dumps' are, costs two lookups). */
static void loop_timers(struct builder *b, uint64_t loop, int clock,
			uint64_t sched, size_t n, struct addrmap *waiters,
			int *indexed, struct timer_cbs *cbs)
{
	struct pyproc *py = b->py;
	struct py_async *a = b->out;
	uint64_t *items, what;
	enum timer_kind k;
	double when;
	size_t i, alloc;

	if (!*indexed) {
		for (i = 0; i < a->ntasks; i++)
			if (a->tasks[i].waiter && !a->tasks[i].framework)
				addrmap_put(waiters, a->tasks[i].waiter,
					    (void *)(uintptr_t)(i + 1));
		*indexed = 1;
	}
	if (n > TIMER_MAX)
		n = TIMER_MAX;
	alloc = n;
	items = xmallocarray(alloc, sizeof(*items));
	/* (n becomes the list's length now: a running target's may have
	 * grown since) */
	if (pyseq_items(py, sched, items, alloc, &n, NULL) < 0)
		n = 0;
	for (i = 0; i < n && i < alloc; i++) {
		struct py_task *t = NULL;
		uintptr_t x;

		k = read_timer(py, items[i], cbs, &what, &when);
		if (k == TIMER_TIMEOUT) {
			x = (uintptr_t)addrmap_get(&a->task_index, what, NULL);
			t = x ? &a->tasks[x - 1] : NULL;
		} else if (k != TIMER_OTHER) {
			x = (uintptr_t)addrmap_get(waiters, what, NULL);
			t = x ? &a->tasks[x - 1] : NULL;
		}
		if (!t || t->loop != loop || t->framework)
			continue;
		if (k == TIMER_SLEEP) {
			t->sleeps = clock;
			t->sleep_until = when;
		} else if (!t->times_out || when < t->timeout_at) {
			/* (nested timeouts: the first to come) */
			t->times_out = clock;
			t->timeout_at = when;
		}
	}
	free(items);
}

/*
 * uvloop keeps its timers in libuv, in C, and none on the loop for
 * Python to see; but asyncio.sleep() keeps the handle call_later()
 * returned in its local `h`.  On uvloop that is a TimerHandle, a Cython
 * object whose fields follow its header and vtable pointer in the order
 * uvloop's cbhandles.pxd declares them: callback, args, _cancelled (an
 * int), timer, loop, context, _debug_info, __weakref__, _when: 96 bytes
 * in all in the releases that have _when (0.17, Debian's, checked here
 * against its type's size, its name, and the task's own loop, future
 * and callback).  _when is uvloop's time(): libuv's loop time, the
 * monotonic clock in milliseconds as of the loop's iteration, in
 * seconds.
 */
#define UV_HANDLE_SIZE 96
#define UV_HANDLE_FIELDS 24   /* callback's offset: after the vtable */
enum { UV_CALLBACK, UV_ARGS, UV_CANCELLED, UV_TIMER, UV_LOOP, UV_CONTEXT,
       UV_DEBUG_INFO, UV_WEAKREF, UV_WHEN, UV_NFIELDS };

/* The due time of uvloop's handle h, in *when, when it is a timer of
 * kind k (a sleep's, a waiter's release) of the task's loop that
 * completes or releases the task's waiter: 0; 1 for a handle of
 * uvloop's that is not that (fired, cancelled: cleared); -1 for no
 * handle of uvloop's. */
static int uv_handle_due(struct pyproc *py, uint64_t h,
			 const struct py_task *t, enum timer_kind k,
			 struct timer_cbs *cbs, double *when)
{
	uint64_t type, f[UV_NFIELDS], fut, size;
	const char *tn;
	size_t n = 0;

	if (!h || pyobj_read_type(py, h, &type, NULL) < 0)
		return -1;
	tn = py_type_name_cached(py, type);
	if (!tn || strcmp(tn, "uvloop.loop.TimerHandle") ||
	    py_field_u64(py, type, py->layout.tp_basicsize, &size, NULL) < 0 ||
	    size != UV_HANDLE_SIZE ||
	    py_read_words(py, h + UV_HANDLE_FIELDS, f, UV_NFIELDS, NULL) < 0)
		return -1;
	if ((uint32_t)f[UV_CANCELLED] || f[UV_LOOP] != t->loop ||
	    kind_of(py, f[UV_CALLBACK], cbs) != k ||
	    pyseq_items(py, f[UV_ARGS], &fut, 1, &n, NULL) < 0 || n < 1 ||
	    fut != t->waiter || py_timer_due(py, f[UV_WHEN], when) < 0)
		return 1;
	return 0;
}

/* Coroutine g's local `name`, when g runs `function` of asyncio's
 * tasks.py; else 0. */
static uint64_t tasks_local(struct pyproc *py, const struct py_gen *g,
			    const char *function, const char *name)
{
	if (!g || !g->has_frame ||
	    !py_code_is(g->code, "/asyncio/tasks.py", function))
		return 0;
	return py_frame_local(py, &g->frame, name);
}

static void set_timeout(struct py_task *t, double when, int clock)
{
	/* (nested timeouts: the first to come) */
	if (!t->times_out || when < t->timeout_at) {
		t->times_out = clock;
		t->timeout_at = when;
	}
}

/* Is the loop uvloop's (its class uvloop.loop.Loop or a subclass:
 * uvloop.Loop), whose time() is libuv's monotonic clock?  (A tp_base
 * chain, bounded.) */
static int uvloop_loop(struct pyproc *py, uint64_t loop)
{
	uint64_t type;
	const char *tn;
	int depth;

	if (pyobj_read_type(py, loop, &type, NULL) < 0)
		return 0;
	for (depth = 0; type && depth < 8; depth++) {
		tn = py_type_name_cached(py, type);
		if (tn && !strcmp(tn, "uvloop.loop.Loop"))
			return 1;
		if (py_field_u64(py, type, py->layout.tp_base, &type,
				 NULL) < 0)
			return 0;
	}
	return 0;
}

/* Coroutine frames of a task looked through for Timeouts: more than
 * the nesting of any program's awaits. */
#define TIMER_MAX_FRAMES 256

/*
 * asyncio.timeout() (3.11+, and wait_for() from 3.12) on a loop whose
 * timers are not read: the Timeout is the manager of an `async with`
 * block open in one of the task's coroutines (readers/withblocks.h),
 * and keeps its own due time, _when, in the loop's time; its
 * _timeout_handler is None once it has fired or was rescheduled to
 * never.  Only a Timeout of asyncio's (its _on_timeout asyncio's) whose
 * _task is this task counts.
 */
static void timeout_blocks(struct builder *b, struct py_task *t, int clock)
{
	struct pyproc *py = b->py;
	struct py_with_blocks wb;
	uint64_t mgr, fn, handler;
	double when;
	size_t i, k;

	for (i = 0; i < t->nstack && i < TIMER_MAX_FRAMES; i++) {
		const struct py_gen *g = py_task_gen(b->out, t, i);

		if (!g || !g->has_frame ||
		    py_with_blocks_read(py, &g->frame, 0, &wb, NULL) < 0)
			continue;
		for (k = 0; k < wb.nheld && k < PY_MAX_WITH; k++) {
			mgr = wb.held[k];
			fn = pyobj_lookup_or_0(py, mgr, "_on_timeout");
			if (!fn || !py_code_is(py_function_code(py, fn),
					       "/asyncio/timeouts.py",
					       "_on_timeout") ||
			    pyobj_own_or_0(py, mgr, "_task") != t->addr)
				continue;
			handler = pyobj_own_or_0(py, mgr, "_timeout_handler");
			if (handler && handler != py->types.none &&
			    handle_float(py, mgr, "_when", &when) == 0)
				set_timeout(t, when, clock);
		}
	}
}

/* A handle a frame keeps (a local of asyncio.sleep(), wait_for(),
 * _wait()): asyncio's TimerHandle (read_timer()) or uvloop's
 * (uv_handle_due()) of kind k for the task's waiter, due at *when on
 * *clock (uvloop's: monotonic; asyncio's: its loop's, `clock`).  0 read;
 * 1 a handle of either that is not that (fired, cancelled); -1 no
 * handle known. */
static int frame_handle_due(struct pyproc *py, uint64_t h,
			    const struct py_task *t, enum timer_kind k,
			    struct timer_cbs *cbs, double *when, int *clock)
{
	uint64_t what;
	enum timer_kind got;
	int r = uv_handle_due(py, h, t, k, cbs, when);

	if (r >= 0) {
		*clock = PY_TIMER_MONOTONIC;
		return r;
	}
	if (!h || (got = read_timer(py, h, cbs, &what, when)) == TIMER_OTHER)
		return -1;
	return got == k && what == t->waiter ? 0 : 1;
}

/* The loops of the tasks whose timers are read: each one's clock, and
 * whether it keeps a _scheduled list. */
struct timer_loop {
	uint64_t loop;
	int clock;
	int unread;   /* no _scheduled list (uvloop's) */
};

/*
 * A task's timers from its own side, for what its loop's _scheduled did
 * not give: asyncio.sleep()'s handle `h` (uvloop's, whose loop keeps no
 * list; asyncio's, once the loop took it off the heap to run it, with
 * the other timers due, and then blocked in that iteration: past due,
 * the task "overdue").  On a loop with no list, also the timeouts:
 * wait_for()'s and wait()'s handle `timeout_handle` up to 3.11, and the
 * Timeouts it is inside.
 */
static void frame_timers(struct builder *b, struct py_task *t,
			 const struct timer_loop *l, struct timer_cbs *cbs)
{
	struct pyproc *py = b->py;
	const struct py_gen *g = py_task_gen(b->out, t, 0);
	double when;
	int r, clock = l->clock;

	if (!t->waiter)
		return;
	if (!t->sleeps) {
		r = frame_handle_due(py, tasks_local(py, g, "sleep", "h"), t,
				     TIMER_SLEEP, cbs, &when, &clock);
		if (r == 0) {
			t->sleeps = clock;
			t->sleep_until = when;
		}
		t->timers_unread = l->unread && r < 0;
	}
	if (!l->unread)
		return;
	if (frame_handle_due(py, tasks_local(py, g, "wait_for",
					     "timeout_handle"),
			     t, TIMER_RELEASE, cbs, &when, &clock) == 0 ||
	    frame_handle_due(py, tasks_local(py, g, "_wait", "timeout_handle"),
			     t, TIMER_RELEASE, cbs, &when, &clock) == 0)
		set_timeout(t, when, clock);
	timeout_blocks(b, t, l->clock);
}

void tasks_read_timers(struct builder *b)
{
	struct py_async *a = b->out;
	struct timer_loop loops[TIMER_MAX_LOOPS];
	struct addrmap waiters;   /* a task's waiter -> its index + 1 */
	struct addrmap anyio;     /* a task -> anyio's TaskState */
	struct timer_cbs cbs;
	uint64_t sched;
	size_t i, k, n, nloops = 0;
	int indexed = 0, with_anyio;

	/* The asyncio tasks' loops (alike tasks come in a row, on one
	 * loop: the last one found is compared first). */
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		if (!t->loop || t->framework ||
		    (nloops && loops[nloops - 1].loop == t->loop))
			continue;
		for (k = 0; k < nloops && loops[k].loop != t->loop; k++)
			;
		if (k == nloops && nloops < TIMER_MAX_LOOPS)
			loops[nloops++].loop = t->loop;
	}
	addrmap_init(&waiters);
	memset(&cbs, 0, sizeof(cbs));
	for (k = 0; k < nloops; k++) {
		struct timer_loop *l = &loops[k];

		sched = 0;
		n = 0;
		/* (a loop whose _scheduled is no list: uvloop's has none) */
		l->unread = pyobj_get_attr(b->py, l->loop, "_scheduled", &sched,
					   NULL) < 0 || !sched ||
			    pyseq_items(b->py, sched, NULL, 0, &n, NULL) < 0;
		l->clock = monotonic_clock(b->py, l->loop) ||
			   (l->unread && uvloop_loop(b->py, l->loop)) ?
			   PY_TIMER_MONOTONIC : PY_TIMER_OWN_CLOCK;
		if (!l->unread && n)
			loop_timers(b, l->loop, l->clock, sched, n, &waiters,
				    &indexed, &cbs);
	}
	addrmap_release(&waiters);
	addrmap_init(&anyio);
	with_anyio = tasks_anyio_states(b->py, a, &anyio);
	/* (bounded: each task once, against at most TIMER_MAX_LOOPS; a
	 * task on no loop found, past that bound, is left) */
	for (i = 0, k = 0; i < a->ntasks; i++) {
		struct py_task *t = &a->tasks[i];
		double when;

		if (t->framework || !t->loop)
			continue;
		if (k >= nloops || loops[k].loop != t->loop)
			for (k = 0; k < nloops && loops[k].loop != t->loop; k++)
				;
		if (k >= nloops)
			continue;
		frame_timers(b, t, &loops[k], &cbs);
		/* anyio's cancel scopes, on any loop */
		if (with_anyio && t->waiter &&
		    tasks_anyio_timeout(b->py, &anyio, t, &when) == 0)
			set_timeout(t, when, loops[k].clock);
	}
	addrmap_release(&anyio);
}
