/*
 * anyio's deadlines on its asyncio backend (move_on_after(), fail_after(),
 * their _at forms, a CancelScope's deadline): when one ends a task's
 * wait.  (On its trio backend they are trio's: readers/trio_timers.c.)
 *
 * anyio keeps, for each task it knows, the innermost cancel scope the
 * task is in: `_task_states` of anyio._backends._asyncio is a
 * WeakKeyDictionary whose `data` dict maps a weak reference to the task
 * to a TaskState, whose slot cancel_scope is that scope.  Each
 * CancelScope links to the one around it (_parent_scope; for a task
 * group's child, the scope the group was opened in), with its _deadline
 * in the loop's time (inf for none) and _shield.  The first deadline to
 * come, not past a shielded scope, ends the wait; none once a scope of
 * the chain was cancelled (_cancel_called): the task is being cancelled
 * already.  The loop's own timer (a TimerHandle calling the scope's
 * _timeout) is not what is read: a scope on uvloop has none to read.
 */
#include "readers/tasks_internal.h"

#include <stdlib.h>

#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "common/banned.h"

/* Tasks anyio knows of, and scopes out from a task, read at most: bounds
 * on what the target controls, past what a program has. */
#define ANYIO_MAX_STATES 65536
#define ANYIO_MAX_SCOPES 64

int tasks_anyio_states(struct pyproc *py, const struct py_async *a,
		       struct addrmap *out)
{
	struct pydict_entry *e;
	uint64_t states, data, task;
	size_t used = 0, k, n;

	states = py_module_attr(py, "anyio._backends._asyncio", "_task_states");
	data = pyobj_own_or_0(py, states, "data");
	if (!data || pydict_entries(py, data, NULL, 0, &used, NULL) < 0 ||
	    !used)
		return 0;
	n = used < ANYIO_MAX_STATES ? used : ANYIO_MAX_STATES;
	e = xmallocarray(n, sizeof(*e));
	if (pydict_entries(py, data, e, n, &used, NULL) < 0) {
		free(e);
		return 0;
	}
	for (k = 0; k < n && k < used; k++)
		if (py_field_u64(py, e[k].key, py->layout.weakref_object,
				 &task, NULL) > 0 &&
		    py_async_task(a, task))
			addrmap_put(out, task, (void *)(uintptr_t)e[k].value);
	free(e);
	return 1;
}

int tasks_anyio_timeout(struct pyproc *py, const struct addrmap *states,
			const struct py_task *t, double *when)
{
	uint64_t state = (uint64_t)(uintptr_t)addrmap_get(states, t->addr,
							  NULL);
	uint64_t scope = pyobj_own_or_0(py, state, "cancel_scope");
	double d;
	int depth, found = 0;

	for (depth = 0; scope && scope != py->types.none &&
	     depth < ANYIO_MAX_SCOPES; depth++) {
		if (pyobj_own_or_0(py, scope, "_cancel_called") ==
		    py->types.true_)
			return -1;
		if (py_timer_due(py, pyobj_own_or_0(py, scope, "_deadline"),
				 &d) == 0 && (!found || d < *when)) {
			*when = d;
			found = 1;
		}
		if (pyobj_own_or_0(py, scope, "_shield") == py->types.true_)
			break;
		scope = pyobj_own_or_0(py, scope, "_parent_scope");
	}
	return found ? 0 : -1;
}
