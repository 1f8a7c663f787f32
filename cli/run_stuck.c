#include "cli/run_stuck.h"

#include <stdlib.h>
#include <string.h>

#include "cli/alike_lines.h"
#include "cli/run_seen.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

#define MAX_STUCK_CAUSES 3

/* Tasks waiting on t, directly or through others (bounded walk). */
static size_t blocked_behind(const struct py_async *a, const struct py_task *t)
{
	struct addrmap seen;
	const struct py_task **work;
	size_t n = 0, nwork = 0, alloc = 0, k;

	addrmap_init(&seen);
	addrmap_add(&seen, t->addr);
	work = xmalloc(sizeof(*work));
	alloc = 1;
	work[nwork++] = t;
	while (nwork) {
		const struct py_task *cur = work[--nwork];

		for (k = 0; k < cur->nawaited_by; k++) {
			const struct py_task *w = py_async_task(a, cur->awaited_by[k]);

			if (!w || !addrmap_add(&seen, w->addr))
				continue;
			n++;
			work = xgrow(work, &alloc, nwork + 1, sizeof(*work));
			work[nwork++] = w;
		}
	}
	free(work);
	addrmap_release(&seen);
	return n;
}

static int in_asyncio_sleep(const struct py_async *a, const struct py_task *t)
{
	const struct py_gen *g;

	if (!t->nstack || t->stack[0] >= a->ngens)
		return 0;
	g = &a->gens[t->stack[0]];
	return g->code && !strcmp(g->code->name, "sleep") &&
	       strstr(g->code->filename, "asyncio");
}

/* A task at the bottom of the waits, and where it ranks. */
struct stuck {
	const struct py_task *t;
	struct run_seen seen;
	size_t behind;            /* tasks blocked behind it */
	size_t order;             /* its index: ties keep the tasks' order */
};

/* The ranking, a total order (qsort needs one): tasks seen stuck first,
 * the longest stuck first; then the one holding up the most tasks (all
 * of them when nothing was sampled); then the tasks' own order. */
static int by_rank(const void *pa, const void *pb)
{
	const struct stuck *a = pa, *b = pb;
	int sa = a->seen.state == RUN_SEEN_STUCK;
	int sb = b->seen.state == RUN_SEEN_STUCK;

	if (sa != sb)
		return sa ? -1 : 1;
	if (sa && a->seen.stuck_for != b->seen.stuck_for)
		return a->seen.stuck_for > b->seen.stuck_for ? -1 : 1;
	if (a->behind != b->behind)
		return a->behind > b->behind ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The tasks at the bottom of the waits, not seen moving, whose wait the
 * graph does not explain (before the ranking and the cap: those it
 * explains would take a place and then be dropped), in rank order; how
 * many into *n. */
static struct stuck *candidates(const struct py_async *a,
				const struct watch_tracker *tr,
				const struct addrmap *explained, size_t *n)
{
	struct stuck *c = xmallocarray(a->ntasks ? a->ntasks : 1, sizeof(*c));
	struct addrmap waits_on_tasks;
	size_t i;

	/* A task some other task is blocked under (gather, TaskGroup...)
	 * is not at the bottom of the waits. */
	run_tasks_awaiting(a, &waits_on_tasks);
	*n = 0;
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];
		struct stuck *cur = &c[*n];
		int found;

		addrmap_get(&waits_on_tasks, t->addr, &found);
		if (!found && explained)
			addrmap_get(explained, t->addr, &found);
		if (!t->waiter || py_async_task(a, t->waiter) || t->running ||
		    found || in_asyncio_sleep(a, t))
			continue;
		/* seen making progress over the samples: not stuck */
		run_seen_task(tr, t->addr, &cur->seen);
		if (cur->seen.state == RUN_SEEN_MOVING)
			continue;
		cur->t = t;
		cur->behind = blocked_behind(a, t);
		cur->order = i;
		(*n)++;
	}
	addrmap_release(&waits_on_tasks);
	qsort(c, *n, sizeof(*c), by_rank);
	return c;
}

/* ", stuck for at least 3.1s, blocking 2 other tasks" */
static void add_state(struct strbuf *sb, const struct stuck *c,
		      const char *each)
{
	if (c->seen.state == RUN_SEEN_STUCK) {
		strbuf_addstr(sb, ", ");
		run_seen_add(sb, &c->seen);
	}
	if (c->behind)
		strbuf_addf(sb, ", blocking %zu other task%s%s", c->behind,
			    c->behind == 1 ? "" : "s", each);
}

/* What makes a stuck task alike another: the type of what it waits
 * on, where, its state. */
static char *stuck_key(const struct py_async *a, const struct stuck *c)
{
	struct strbuf sb, place;

	strbuf_init(&sb);
	strbuf_init(&place);
	alike_lines_key_str(&sb, c->t->waiter_type);
	run_add_task_where(&place, a, c->t);
	alike_lines_key_str(&sb, place.buf);
	strbuf_reset(&place);
	add_state(&place, c, "");
	alike_lines_key_str(&sb, place.buf);
	strbuf_release(&place);
	return strbuf_detach(&sb);
}

/* One cause for members m[0..n) of the ranked candidates c. */
static struct run_cause *stuck_cause(struct run_summary *s, int pid,
				     const struct py_async *a,
				     const struct stuck *c, const size_t *m,
				     size_t n, struct strbuf *sb)
{
	const struct stuck *first = &c[m[0]];
	const char *type = first->t->waiter_type ? first->t->waiter_type :
			   "a future";
	struct run_cause *cause;
	const char **names;
	size_t k;

	if (n == 1) {
		strbuf_addf(sb, "stuck task: %s waits on %s 0x%llx",
			    first->t->name ? first->t->name : "?", type,
			    (unsigned long long)first->t->waiter);
		add_state(sb, first, "");
	} else {
		strbuf_addf(sb, "%zu stuck tasks wait on %s", n, type);
		add_state(sb, first, " each");
		strbuf_addstr(sb, ": ");
		names = xmallocarray(n, sizeof(*names));
		for (k = 0; k < n; k++)
			names[k] = c[m[k]].t->name;
		alike_lines_members(sb, NULL, names, n, ALIKE_QUOTED);
		free(names);
	}
	cause = run_cause_add(s, RUN_CAUSE_STUCK_TASK, pid, sb);
	if (n == 1) {
		run_add_task_place(sb, a, first->t);
	} else {
		strbuf_addstr(sb, "tasks");   /* where they all are */
		run_add_task_where(sb, a, first->t);
	}
	run_cause_detail(cause, sb);
	return cause;
}

void run_summarize_stuck_tasks(struct run_summary *s, int pid,
			       const struct py_async *a,
			       const struct watch_tracker *tr)
{
	size_t n, i, left = 0;
	struct stuck *c = candidates(a, tr, s->explained, &n);
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	struct run_cause *last = NULL;
	struct alike_lines g;
	struct strbuf sb;

	for (i = 0; i < n; i++)
		keys[i] = stuck_key(a, &c[i]);
	alike_lines_group(&g, keys, n, s->apart);
	strbuf_init(&sb);
	for (i = 0; i < g.ngroups; i++) {
		size_t size = g.first[i + 1] - g.first[i];

		if (i >= MAX_STUCK_CAUSES) {
			left += size;
			continue;
		}
		last = stuck_cause(s, pid, a, c, g.member + g.first[i], size,
				   &sb);
	}
	if (last && left) {
		strbuf_addf(&sb, "and %zu more stuck task%s", left,
			    left == 1 ? "" : "s");
		run_cause_detail(last, &sb);
	}
	strbuf_release(&sb);
	alike_lines_release(&g);
	free(c);
}
