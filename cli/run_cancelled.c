#include "cli/run_cancelled.h"

#include <string.h>

#include "cli/escape.h"
#include "cli/run_places.h"
#include "cli/run_seen.h"
#include "cli/run_units.h"
#include "cli/watch_track.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* A task group's owner in its exit, waiting for its children to end
 * after one failed (asyncio's TaskGroup, its exit's body _aexit() in
 * 3.14; anyio's on asyncio): cancelled by the group, by design; a child
 * that goes on is the cause. */
static int in_group_exit(const struct py_async *a, const struct py_task *t)
{
	const struct py_gen *inner = t->nstack ? py_task_gen(a, t, 0) : NULL;

	if (!inner || !inner->has_frame || !inner->qualname)
		return 0;
	if (!strcmp(inner->qualname, "TaskGroup._aexit"))
		return py_code_is(inner->code, "/asyncio/taskgroups.py",
				  "_aexit");
	return !strcmp(inner->qualname, "TaskGroup.__aexit__") &&
	       (py_code_is(inner->code, "/asyncio/taskgroups.py",
			   "__aexit__") ||
		py_code_is(inner->code, "/anyio/_backends/_asyncio.py",
			   "__aexit__"));
}

/* Is task i one to name: asyncio's, pending, a cancel requested, a
 * node of the graph the samples saw stuck, or cancelled at every sample
 * for the stuck threshold (a task that swallows the CancelledError in a
 * loop moves, and goes on; under anyio, whose scope cancels it again at
 * each turn of the loop, it runs, its thread busy)?  Its node in *node,
 * what the samples saw in *seen. */
static int goes_on(const struct collection *c, const struct watch_tracker *t,
		   size_t i, size_t *node, struct run_seen *seen)
{
	const struct py_task *task = &c->async.tasks[i];
	long n;

	if (task->framework || task->cancels_requested <= 0 ||
	    in_group_exit(&c->async, task))
		return 0;
	n = py_waitgraph_node_of(&c->graph, WG_TASK, i);
	if (n < 0)
		return 0;
	run_node_seen(c, t, (size_t)n, seen);
	*node = (size_t)n;
	return seen->state == RUN_SEEN_STUCK ||
	       seen->cancelled_for >= t->stuck_s;
}

/* "task 'w' goes on though cancelled (1 cancel request outstanding,
 * for at least 2.5s): ..." */
static void add_head(struct strbuf *sb, const struct py_task *task,
		     const struct run_seen *seen)
{
	strbuf_addstr(sb, "task '");
	esc_add_name_raw(sb, task->name);
	strbuf_addf(sb, "' goes on though cancelled (%d cancel request%s "
		    "outstanding", task->cancels_requested,
		    task->cancels_requested == 1 ? "" : "s");
	if (seen->cancelled_for > 0)
		strbuf_addf(sb, ", for %s%.1fs",
			    seen->cancelled_at_least ? "at least " : "",
			    seen->cancelled_for);
	strbuf_addstr(sb, "): it caught the CancelledError, or its cleanup "
		      "waits");
}

void run_summarize_cancelled(struct run_summary *s,
			     const struct collection *c,
			     const struct watch_tracker *t)
{
	const struct py_async *a = &c->async;
	struct run_cause *cause = NULL;
	struct run_seen seen;
	struct strbuf sb;
	size_t i, node, n = 0;

	/* (a forked child's tasks are its parent's copies) */
	if (!t || a->copied_at_fork)
		return;
	strbuf_init(&sb);
	/* Bounded by the tasks. */
	for (i = 0; i < a->ntasks; i++) {
		if (!goes_on(c, t, i, &node, &seen))
			continue;
		if (n++ >= RUN_CANCELLED_NAMED)
			continue;
		add_head(&sb, &a->tasks[i], &seen);
		cause = run_cause_add(s, RUN_CAUSE_CANCELLED, c->pid, &sb);
		/* (the graph says where a parked task is; a running one's
		 * step is on its thread: where, from its coroutines) */
		if (a->tasks[i].running) {
			strbuf_addstr(&sb, "running: ");
			run_add_task_place(&sb, a, &a->tasks[i]);
			run_cause_detail(cause, &sb);
		} else {
			run_unit_detail(cause, c, t, node, s->facts, &sb);
		}
	}
	if (cause && n > RUN_CANCELLED_NAMED) {
		strbuf_addf(&sb, "and %zu more tasks that go on though "
			    "cancelled", n - RUN_CANCELLED_NAMED);
		run_cause_detail(cause, &sb);
	}
	strbuf_release(&sb);
}
