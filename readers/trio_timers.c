/*
 * trio's deadlines: when trio.sleep() wakes a task, and when a cancel
 * scope's deadline (trio.move_on_after(), fail_after(), their _at forms,
 * anyio's on its trio backend) ends what it waits for.
 *
 * A task's cancel status (Task._cancel_status, a CancelStatus) links to
 * its parent's (_parent) up to the run's root, each standing for the
 * CancelScope of one `with` block (_scope), whose _deadline (a float,
 * inf for none) cancels the work inside it then.  A shielded scope
 * (_shield) keeps the deadlines outside it off the work inside; a status
 * already cancelled (effectively_cancelled) is past its deadline.
 * trio.sleep() is sleep_until(deadline): move_on_at(deadline) around
 * sleep_forever(), so the innermost scope of a task parked there is the
 * sleep's, and its deadline sleep_until()'s local `deadline`.
 *
 * The times are the run's clock (Runner.clock): the default SystemClock
 * keeps time.perf_counter(), CLOCK_MONOTONIC on Linux as
 * time.monotonic(), plus its `offset`: less that, a due time is on the
 * monotonic clock (PY_TIMER_MONOTONIC); another clock (trio.testing's
 * MockClock) keeps its own (PY_TIMER_OWN_CLOCK).  Every slot is found by
 * name (pyobj_slot_offset(): trio's classes are attrs slots classes),
 * once per class.
 */
#include "readers/trio.h"

#include <math.h>
#include <string.h>

#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "readers/stacks.h"
#include "common/banned.h"

/* Cancel statuses followed from a task outwards at most: a bound on a
 * list the target controls, past the nesting a program has. */
#define TRIO_MAX_SCOPES 64

/* A slot's offset in one class, found once. */
struct slot {
	const char *name;
	uint64_t type;
	int off;
};

/* obj's slot s (its class's offset remembered), 0 where obj is of
 * another class than the one remembered and has no such slot. */
static uint64_t slot_u64(struct pyproc *py, uint64_t obj, struct slot *s)
{
	uint64_t type, v = 0;
	int off;

	if (!obj || obj == py->types.none ||
	    pyobj_read_type(py, obj, &type, NULL) < 0)
		return 0;
	if (type != s->type) {
		if (pyobj_slot_offset(py, obj, s->name, &off, NULL) < 0)
			return 0;
		s->type = type;
		s->off = off;
	}
	return py_field_u64(py, obj, s->off, &v, NULL) > 0 ? v : 0;
}

struct trio_clock_slots {
	struct slot cancel_status, parent, scope, cancelled, deadline, shield,
		    clock, clock_offset;
	uint64_t system_clock;    /* trio._core._run.SystemClock */
	uint64_t runner;          /* the last run's, and its clock: */
	int kind;                 /* PY_TIMER_* */
	double offset;
};

/* The deadline of scope: 0 with *out, -1 for none (inf, unreadable). */
static int scope_deadline(struct pyproc *py, struct trio_clock_slots *s,
			  uint64_t scope, double *out)
{
	return py_timer_due(py, slot_u64(py, scope, &s->deadline), out);
}

/* The run's clock: whether it is the SystemClock, and its offset. */
static void run_clock(struct pyproc *py, struct trio_clock_slots *s,
		      uint64_t runner)
{
	uint64_t clock, type;

	if (runner == s->runner)
		return;
	s->runner = runner;
	s->kind = PY_TIMER_OWN_CLOCK;
	clock = slot_u64(py, runner, &s->clock);
	if (!clock || !s->system_clock ||
	    pyobj_read_type(py, clock, &type, NULL) < 0 ||
	    type != s->system_clock ||
	    py_timer_due(py, slot_u64(py, clock, &s->clock_offset),
			 &s->offset) < 0)
		return;
	s->kind = PY_TIMER_MONOTONIC;
}

/* Is the task parked in trio.sleep() (or sleep_until())?  -1 not; 0
 * with *out the deadline sleep_until() waits for; 1 when that local
 * could not be read (its innermost scope is the sleep's all the
 * same). */
static int sleep_deadline(struct pyproc *py, const struct py_async *a,
			  const struct py_task *t, double *out)
{
	size_t i;

	for (i = 0; i < t->nstack; i++) {
		const struct py_gen *g = py_task_gen(a, t, i);

		if (g && g->has_frame &&
		    py_code_is(g->code, "/trio/_timeouts.py", "sleep_until"))
			return py_timer_due(py, py_frame_local(py, &g->frame,
							       "deadline"),
					    out) == 0 ? 0 : 1;
	}
	return -1;
}

/* Is the task waiting in trio.to_thread.run_sync() for a job it cannot
 * abandon (cancellable=False, trio's default; abandon_on_cancel since
 * 0.23)?  A cancel then waits for the thread: no deadline ends the
 * wait, as a shield's would not. */
static int waits_unabandonable_job(struct pyproc *py, const struct py_async *a,
				   const struct py_task *t)
{
	static const char *const names[] = { "abandon_on_cancel",
					     "cancellable" };
	size_t i, k;

	for (i = 0; i < t->nstack; i++) {
		const struct py_gen *g = py_task_gen(a, t, i);

		if (!g || !g->has_frame ||
		    !py_code_is(g->code, "/trio/_threads.py",
				"to_thread_run_sync"))
			continue;
		for (k = 0; k < 2; k++) {
			uint64_t v = py_frame_local(py, &g->frame, names[k]);

			if (v)
				return v == py->types.false_ ||
				       v == py->types.none;
		}
		return 0;
	}
	return 0;
}

/* A parked task's sleep, and the first deadline of the scopes around
 * its wait. */
static void task_timers(struct pyproc *py, struct trio_clock_slots *s,
			const struct py_async *a, struct py_task *t)
{
	uint64_t status, scope, shield, sleep_scope = 0, first_scope = 0;
	double sleep = 0, first = 0, d;
	int in_sleep, sleeps, timed = 0, depth;

	status = slot_u64(py, t->addr, &s->cancel_status);
	if (!status ||
	    slot_u64(py, status, &s->cancelled) == py->types.true_)
		return;   /* (cancelled: its deadline has passed) */
	in_sleep = sleep_deadline(py, a, t, &sleep);
	sleeps = in_sleep == 0;
	if (!sleeps && waits_unabandonable_job(py, a, t))
		return;
	for (depth = 0; status && depth < TRIO_MAX_SCOPES; depth++) {
		scope = slot_u64(py, status, &s->scope);
		/* (a sleep's own scope is its wake, not a timeout) */
		if (in_sleep >= 0 && !depth) {
			sleep_scope = scope;
		} else if (scope_deadline(py, s, scope, &d) == 0 &&
			   (!timed || d < first)) {
			first = d;
			first_scope = scope;
			timed = 1;
		}
		shield = slot_u64(py, scope, &s->shield);
		if (shield == py->types.true_)
			break;
		status = slot_u64(py, status, &s->parent);
	}
	if (!sleeps && !timed)
		return;
	/* (the JSON's "awaiting" object: the sleep's scope, else the
	 * timeout's) */
	t->timer_scope = sleeps && sleep_scope ? sleep_scope : first_scope;
	run_clock(py, s, t->loop);
	d = s->kind == PY_TIMER_MONOTONIC ? s->offset : 0;
	if (sleeps) {
		t->sleeps = s->kind;
		t->sleep_until = sleep - d;
	}
	if (timed) {
		t->times_out = s->kind;
		t->timeout_at = first - d;
	}
}

void py_trio_read_timers(struct pyproc *py, struct py_async *a, size_t first)
{
	struct trio_clock_slots s;
	size_t i;

	memset(&s, 0, sizeof(s));
	s.cancel_status.name = "_cancel_status";
	s.parent.name = "_parent";
	s.scope.name = "_scope";
	s.cancelled.name = "effectively_cancelled";
	s.deadline.name = "_deadline";
	s.shield.name = "_shield";
	s.clock.name = "clock";
	s.clock_offset.name = "offset";
	s.system_clock = py_module_attr(py, "trio._core._run", "SystemClock");
	/* (a task on no run found: a clock of its own, its times as they
	 * are) */
	s.kind = PY_TIMER_OWN_CLOCK;
	for (i = first; i < a->ntasks; i++) {
		struct py_task *t = &a->tasks[i];

		/* (a running task waits for nothing) */
		if (t->framework && !t->running)
			task_timers(py, &s, a, t);
	}
}
