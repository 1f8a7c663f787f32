#include "cli/run_stuck.h"
#include "cli/escape.h"

#include <stdlib.h>
#include <string.h>

#include "cli/alike_lines.h"
#include "cli/timer_text.h"
#include "cli/run_pool.h"
#include "cli/run_fds.h"
#include "cli/run_places.h"
#include "cli/run_seen.h"
#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/task_cycles.h"
#include "readers/usercode.h"
#include "readers/waitgraph.h"
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

/* Tasks waiting on t through their nurseries (a trio task has one
 * parent), added to seen; how many were new.  Bounded: a cycle of
 * parents stops at a task seen, and there are a->ntasks in all. */
static size_t nursery_behind(const struct py_async *a, const struct py_task *t,
			     struct addrmap *seen)
{
	size_t n = 0, steps = 0;

	while (t && t->nawaited_by && steps++ < a->ntasks) {
		t = py_async_task(a, t->awaited_by[0]);
		if (!t || !addrmap_add(seen, t->addr))
			break;
		n++;
	}
	return n;
}

/* Is t's innermost coroutine asyncio.sleep()?  Under it, a Future of
 * asyncio's Python code has a generator of its own, its __await__()
 * (nest_asyncio puts them in place of the C ones). */
static int in_asyncio_sleep(const struct py_async *a, const struct py_task *t)
{
	const struct py_gen *g = py_task_gen(a, t, 0);

	if (g && py_code_is(g->code, "asyncio/futures.py", "__await__"))
		g = py_task_gen(a, t, 1);
	return g && g->code && !strcmp(g->code->name, "sleep") &&
	       strstr(g->code->filename, "asyncio");
}

static int in_trio(const struct py_gen *g)
{
	return strstr(g->code->filename, "/trio/") ||
	       strstr(g->code->filename, "/anyio/");
}

/* Is any coroutine of the chain waiting on a clock (trio.sleep*)?  Its
 * deadline will wake it. */
static int trio_timed(const struct py_async *a, const struct py_task *t)
{
	size_t k;

	for (k = 0; k < t->nstack; k++) {
		const struct py_gen *g = py_task_gen(a, t, k);

		if (g && g->code && !strcmp(g->code->name, "sleep_until") &&
		    strstr(g->code->filename, "/trio/"))
			return 1;
	}
	return 0;
}

/* The program's own innermost coroutine of a trio task (outside trio
 * and anyio), or NULL; into *in the outermost of trio's inside it, what
 * the task is parked in. */
static const struct py_gen *trio_own(const struct py_async *a,
				     const struct py_task *t,
				     const struct py_gen **in)
{
	size_t k;

	*in = NULL;
	for (k = 0; k < t->nstack; k++) {
		const struct py_gen *g = py_task_gen(a, t, k);

		if (!g || !g->has_frame || !g->code)
			continue;
		if (!in_trio(g))
			return g;
		*in = g;
	}
	return NULL;
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

/*
 * The two frameworks' stuck tasks, told apart by what is at the bottom
 * of the waits and how a cause reads.  asyncio: a task parked on a plain
 * future (not another task, not asyncio.sleep()); tasks waiting on it
 * through gathers and TaskGroups are blocked behind it.  trio: a task
 * with no child in a nursery, not on a clock; its nursery's task and
 * theirs up to the root are behind it.
 */
struct stuck_kind {
	int (*at_bottom)(const struct py_async *a, const struct py_task *t);
	size_t (*behind)(const struct py_async *a, const struct py_task *t);
	char *(*key)(const struct py_async *a, const struct stuck *c);
	struct run_cause *(*cause)(struct run_summary *s, int pid,
				   const struct run_snap *rs,
				   const struct py_async *a,
				   const struct stuck *c, const size_t *m,
				   size_t n, struct strbuf *sb);
	const char *what;         /* "stuck task", "stuck trio task" */
};

/* The tasks at the bottom of the waits, not seen moving, whose wait the
 * graph does not explain (before the ranking and the cap: those it
 * explains would take a place and then be dropped), in rank order; how
 * many into *n. */
/* Does task i wait, through a concurrent future, for a task a graph
 * cause names (run_coroutine_threadsafe()'s on another loop, awaited
 * through wrap_future())?  That cause says more; said twice before. */
static int behind_explained(const struct py_waitgraph *g,
			    const struct py_async *a, size_t i,
			    const struct addrmap *explained)
{
	long node, to;
	int found = 0;

	if (!g || !explained ||
	    (node = py_waitgraph_node_of(g, WG_TASK, i)) < 0 ||
	    (to = py_waitgraph_task_behind_cfuture(g, (size_t)node)) < 0 ||
	    g->nodes[to].index >= a->ntasks)
		return 0;
	addrmap_get(explained, a->tasks[g->nodes[to].index].addr, &found);
	return found;
}

static struct stuck *candidates(const struct stuck_kind *kind,
				const struct py_async *a,
				const struct watch_tracker *tr,
				const struct run_summary *s, size_t *n)
{
	const struct addrmap *explained = s->explained;
	struct stuck *c = xmallocarray(a->ntasks ? a->ntasks : 1, sizeof(*c));
	struct addrmap waits_on_tasks;
	size_t i;

	/* A task some other task is blocked under (gather, TaskGroup,
	 * nursery...) is not at the bottom of the waits. */
	run_tasks_awaiting(a, &waits_on_tasks);
	*n = 0;
	for (i = 0; i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];
		struct stuck *cur = &c[*n];
		int found;

		addrmap_get(&waits_on_tasks, t->addr, &found);
		if (!found && explained)
			addrmap_get(explained, t->addr, &found);
		if (found || t->running || !kind->at_bottom(a, t) ||
		    behind_explained(s->graph, a, i, explained))
			continue;
		/* seen making progress over the samples: not stuck */
		run_seen_task(tr, t->addr, &cur->seen);
		if (cur->seen.state == RUN_SEEN_MOVING)
			continue;
		cur->t = t;
		cur->behind = kind->behind(a, t);
		cur->order = i;
		(*n)++;
	}
	addrmap_release(&waits_on_tasks);
	qsort(c, *n, sizeof(*c), by_rank);
	return c;
}

/* ", stuck for at least 3.1s" */
static void add_seen(struct strbuf *sb, const struct stuck *c)
{
	if (c->seen.state == RUN_SEEN_STUCK) {
		strbuf_addstr(sb, ", ");
		run_seen_add(sb, &c->seen);
	}
}

/* ", blocking 2 other tasks" and each */
static void add_behind(struct strbuf *sb, size_t behind, const char *each)
{
	if (behind)
		strbuf_addf(sb, ", blocking %zu other task%s%s", behind,
			    behind == 1 ? "" : "s", each);
}

/* asyncio */

static int asyncio_at_bottom(const struct py_async *a, const struct py_task *t)
{
	return !t->framework && t->waiter && !py_async_task(a, t->waiter) &&
	       !in_asyncio_sleep(a, t) && !run_task_serving_forever(a, t);
}

/* What makes a stuck task alike another: the type of what it waits
 * on, where, its state. */
static char *asyncio_key(const struct py_async *a, const struct stuck *c)
{
	struct strbuf sb, place;

	strbuf_init(&sb);
	strbuf_init(&place);
	alike_lines_key_str(&sb, c->t->waiter_type);
	run_add_task_where(&place, a, c->t);
	alike_lines_key_str(&sb, place.buf);
	strbuf_reset(&place);
	add_seen(&place, c);
	add_behind(&place, c->behind, "");
	alike_lines_key_str(&sb, place.buf);
	strbuf_release(&place);
	return strbuf_detach(&sb);
}

/* ", times out in 596.9s" (cli/timer_text.c): when the timeout the
 * task, or each task of the group, awaits under (asyncio.timeout(),
 * wait_for(), wait()) ends the wait; nothing when one has none. */
static void add_timeout(struct strbuf *sb, double clock_s,
			const struct stuck *c, const size_t *m, size_t n)
{
	struct timer_span span;
	size_t k;

	memset(&span, 0, sizeof(span));
	for (k = 0; k < n; k++)
		timer_span_task(&span, c[m[k]].t, 1);
	(void)timer_text_span(sb, &span, 0, clock_s);
}

/* The members' names, quoted, to end a group's headline. */
static void add_members(struct strbuf *sb, const struct stuck *c,
			const size_t *m, size_t n)
{
	const char **names = xmallocarray(n, sizeof(*names));
	size_t k;

	for (k = 0; k < n; k++)
		names[k] = c[m[k]].t->name;
	strbuf_addstr(sb, ": ");
	alike_lines_members(sb, NULL, names, n, ALIKE_QUOTED);
	free(names);
}

/* The detail line: where the task, or the group, is parked. */
static void add_place(struct run_cause *cause, const struct py_async *a,
		      const struct py_task *t, size_t n, struct strbuf *sb)
{
	if (n == 1) {
		run_add_task_place(sb, a, t);
	} else {
		strbuf_addstr(sb, "tasks");   /* where they all are */
		run_add_task_where(sb, a, t);
	}
	run_cause_detail(cause, sb);
}

/* Awaiters looked up for one of the program's own, at most. */
#define AWAITER_DEPTH 8

/* Has task t a coroutine of the program's own code? */
static int has_own_frame(const struct py_async *a, const struct py_task *t)
{
	size_t k;

	for (k = 0; k < t->nstack; k++) {
		const struct py_gen *g = py_task_gen(a, t, k);

		if (g && g->has_frame && g->frame.code &&
		    py_is_user_file(g->frame.code->filename, NULL))
			return 1;
	}
	return 0;
}

/* A task all in a library's code (aiohttp's request, gathered from the
 * program's s.get()): "awaited by task 'Task-1' at app.py:22 in main",
 * the nearest of its awaiters that is in the program's code. */
static void add_own_awaiter(struct run_cause *cause, const struct py_async *a,
			    const struct py_task *t, struct strbuf *sb)
{
	int depth;

	if (has_own_frame(a, t))
		return;
	for (depth = 0; depth < AWAITER_DEPTH && t && t->nawaited_by; depth++) {
		t = py_async_task(a, t->awaited_by[0]);
		if (!t || !has_own_frame(a, t))
			continue;
		strbuf_addstr(sb, "awaited by task '");
		esc_add_name_raw(sb, t->name ? t->name : "?");
		strbuf_addch(sb, '\'');
		run_add_task_where(sb, a, t);
		run_cause_detail(cause, sb);
		return;
	}
}

/* One cause for members m[0..n) of the ranked candidates c. */
static struct run_cause *asyncio_cause(struct run_summary *s, int pid,
				       const struct run_snap *rs,
				       const struct py_async *a,
				       const struct stuck *c, const size_t *m,
				       size_t n, struct strbuf *sb)
{
	const struct stuck *first = &c[m[0]];
	const char *type = first->t->waiter_type ? first->t->waiter_type :
			   "a future";
	struct run_cause *cause;

	if (n == 1) {
		strbuf_addstr(sb, "stuck task: ");
		esc_add_name_raw(sb, first->t->name);
		strbuf_addstr(sb, " waits on ");
		esc_add_name_raw(sb, type);
		strbuf_addf(sb, " 0x%llx", (unsigned long long)first->t->waiter);
		add_seen(sb, first);
		add_behind(sb, first->behind, "");
		add_timeout(sb, s->clock_s, c, m, n);
	} else {
		strbuf_addf(sb, "%zu stuck tasks wait on ", n);
		esc_add_name_raw(sb, type);
		add_seen(sb, first);
		add_behind(sb, first->behind, " each");
		add_timeout(sb, s->clock_s, c, m, n);
		add_members(sb, c, m, n);
	}
	cause = run_cause_add(s, RUN_CAUSE_STUCK_TASK, pid, sb);
	add_place(cause, a, first->t, n, sb);
	add_own_awaiter(cause, a, first->t, sb);
	if (n == 1 && s->graph) {
		long node = py_waitgraph_node_of(s->graph, WG_TASK,
						 (size_t)(first->t - a->tasks));

		if (!run_add_worker(cause, s->graph, rs->snap, rs->facts, node,
				    &s->said_threads, sb))
			(void)run_add_pool_job(cause, s, node, sb);
	}
	/* (a task of the main thread's loop: pytest-asyncio's test) */
	if (s->graph && first->t->tid == pid)
		run_cause_test(cause, s->graph->test, sb);
	return cause;
}

/* trio (and anyio on trio) */

static int trio_at_bottom(const struct py_async *a, const struct py_task *t)
{
	/* trio's own tasks are named "<init>", "<TrioToken...>" */
	return t->framework && !(t->name && t->name[0] == '<') &&
	       !trio_timed(a, t);
}

static size_t trio_behind(const struct py_async *a, const struct py_task *t)
{
	struct addrmap seen;
	size_t n;

	addrmap_init(&seen);
	addrmap_add(&seen, t->addr);
	n = nursery_behind(a, t, &seen);
	addrmap_release(&seen);
	return n;
}

/* " parked in Event.wait" (the trio call the task is parked in), "
 * parked in a trio socket's recv, to read fd 7" (one parked on a file
 * descriptor: trio's wrapper of a socket method names nothing); fd 0:
 * "to read" without the fd (alike tasks, each on its own). */
static void add_trio_parked(struct strbuf *sb, const struct py_task *t,
			    const struct py_gen *in, int fd)
{
	if (t->io_call) {
		strbuf_addstr(sb, " parked in a trio socket's ");
		esc_add_name_raw(sb, t->io_call);
	} else if (in) {
		strbuf_addstr(sb, " parked in ");
		esc_add_name_raw(sb, in->qualname);
	}
	if (t->io_wait == PY_IO_NONE)
		return;
	strbuf_addf(sb, ", to %s", t->io_wait == PY_IO_READ ? "read" :
		    "write");
	if (fd)
		strbuf_addf(sb, " fd %lld", (long long)t->io_fd);
}

/* Alike: parked in the same trio call, at the same place of the
 * program's own, stuck as long.  Not what they block: siblings of one
 * nursery block the same tasks, and the cause counts those once. */
static char *trio_key(const struct py_async *a, const struct stuck *c)
{
	const struct py_gen *in, *own = trio_own(a, c->t, &in);
	struct strbuf sb, part;

	strbuf_init(&sb);
	strbuf_init(&part);
	add_trio_parked(&part, c->t, in, 0);
	alike_lines_key_str(&sb, part.buf);
	strbuf_reset(&part);
	if (own)
		run_add_frame_place(&part, &own->frame);
	alike_lines_key_str(&sb, part.buf);
	strbuf_reset(&part);
	add_seen(&part, c);
	alike_lines_key_str(&sb, part.buf);
	strbuf_release(&part);
	return strbuf_detach(&sb);
}

static struct run_cause *trio_cause(struct run_summary *s, int pid,
				    const struct run_snap *rs,
				    const struct py_async *a,
				    const struct stuck *c, const size_t *m,
				    size_t n, struct strbuf *sb)
{
	const struct stuck *first = &c[m[0]];
	const struct py_gen *in, *own = trio_own(a, first->t, &in);
	struct run_cause *cause;
	struct addrmap seen;
	size_t behind = 0, k;

	addrmap_init(&seen);
	for (k = 0; k < n; k++)
		addrmap_add(&seen, c[m[k]].t->addr);
	for (k = 0; k < n; k++)
		behind += nursery_behind(a, c[m[k]].t, &seen);
	addrmap_release(&seen);
	if (n == 1) {
		strbuf_addstr(sb, "stuck trio task: ");
		esc_add_name_raw(sb, first->t->name);
	} else {
		strbuf_addf(sb, "%zu stuck trio tasks", n);
	}
	add_trio_parked(sb, first->t, in, n == 1);
	add_seen(sb, first);
	add_behind(sb, behind, "");
	/* (a deadline of a cancel scope around the wait) */
	add_timeout(sb, s->clock_s, c, m, n);
	if (n > 1)
		add_members(sb, c, m, n);
	cause = run_cause_add(s, RUN_CAUSE_STUCK_TASK, pid, sb);
	if (own) {
		if (n == 1) {
			strbuf_addstr(sb, "task ");
			esc_add_name_raw(sb, first->t->name);
			strbuf_addstr(sb, " at ");
		} else
			strbuf_addstr(sb, "tasks at ");
		run_add_frame_place(sb, &own->frame);
		run_cause_detail(cause, sb);
	}
	/* (trio.to_thread.run_sync(): its job's thread) */
	if (n == 1 && s->graph)
		(void)run_add_worker(cause, s->graph, rs->snap, rs->facts,
				     py_waitgraph_node_of(s->graph, WG_TASK,
					(size_t)(first->t - a->tasks)),
				     &s->said_threads, sb);
	if (s->graph && first->t->tid == pid)
		run_cause_test(cause, s->graph->test, sb);
	return cause;
}

static const struct stuck_kind asyncio_kind = {
	asyncio_at_bottom, blocked_behind, asyncio_key, asyncio_cause,
	"stuck task",
};

static const struct stuck_kind trio_kind = {
	trio_at_bottom, trio_behind, trio_key, trio_cause, "stuck trio task",
};

/* One framework's causes: ranked, alike ones grouped, the first three
 * groups added, the last saying how many tasks it left out. */
static void summarize_kind(struct run_summary *s, int pid,
			   const struct run_snap *rs,
			   const struct py_async *a,
			   const struct watch_tracker *tr,
			   const struct stuck_kind *kind)
{
	size_t n, i, left = 0;
	struct stuck *c = candidates(kind, a, tr, s, &n);
	char **keys = xmallocarray(n ? n : 1, sizeof(*keys));
	struct run_cause *last = NULL;
	struct alike_lines g;
	struct strbuf sb;

	for (i = 0; i < n; i++)
		keys[i] = kind->key(a, &c[i]);
	alike_lines_group(&g, keys, n, s->apart);
	strbuf_init(&sb);
	for (i = 0; i < g.ngroups; i++) {
		size_t size = g.first[i + 1] - g.first[i];

		if (i >= MAX_STUCK_CAUSES) {
			left += size;
			continue;
		}
		last = kind->cause(s, pid, rs, a, c, g.member + g.first[i],
				   size, &sb);
		/* (the fd a lone task is parked on: its socket's peer, its
		 * pipe's writers) */
		if (size == 1 && c[g.member[g.first[i]]].t->io_wait !=
				 PY_IO_NONE)
			(void)run_fds_detail(last, s, pid,
					     c[g.member[g.first[i]]].t->io_fd,
					     &sb);
	}
	if (last && left) {
		strbuf_addf(&sb, "and %zu more %s%s", left, kind->what,
			    left == 1 ? "" : "s");
		run_cause_detail(last, &sb);
	}
	strbuf_release(&sb);
	alike_lines_release(&g);
	free(c);
}

void run_summarize_stuck_tasks(struct run_summary *s, int pid,
			       const struct run_snap *rs,
			       const struct py_async *a,
			       const struct watch_tracker *tr)
{
	summarize_kind(s, pid, rs, a, tr, &asyncio_kind);
	summarize_kind(s, pid, rs, a, tr, &trio_kind);
}

/* Its name, and with addr its address too. */
static void add_task_name(struct strbuf *sb, const struct py_async *a,
			  uint64_t at, int addr)
{
	const struct py_task *task = py_async_task(a, at);

	esc_add_name_raw(sb, task ? task->name : NULL);
	if (addr)
		strbuf_addf(sb, " 0x%llx", (unsigned long long)at);
}

/*
 * RUN_CAUSE_AWAIT_CYCLE: one per cycle of tasks awaiting each other,
 * named as dump names them, with a line per task saying where it is
 * suspended.
 */
void run_summarize_await_cycles(struct run_summary *s, int pid,
				const struct py_async *a)
{
	struct run_cause *cause;
	struct strbuf sb;
	size_t i, k;

	strbuf_init(&sb);
	for (i = 0; i < a->ncycles; i++) {
		size_t len = a->cycle_len[i];
		int addr = py_async_cycle_names_clash(a, i);

		if (!len)
			continue;
		strbuf_addstr(&sb, "await cycle: ");
		for (k = 0; k <= len; k++) {
			if (k)
				strbuf_addstr(&sb, " -> ");
			add_task_name(&sb, a, a->cycles[i][k % len], addr);
		}
		cause = run_cause_add(s, RUN_CAUSE_AWAIT_CYCLE, pid, &sb);
		for (k = 0; k < len; k++) {
			const struct py_task *task =
				py_async_task(a, a->cycles[i][k]);

			if (!task)
				continue;
			strbuf_addstr(&sb, "task ");
			add_task_name(&sb, a, task->addr, addr);
			run_add_task_where(&sb, a, task);
			run_cause_detail(cause, &sb);
		}
	}
	strbuf_release(&sb);
}
