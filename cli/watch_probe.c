/*
 * The probe after a sample: see cli/watch_probe.h.
 */
#include "cli/watch_probe.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cli/watch_sample.h"
#include "common/le.h"
#include "common/util.h"
#include "common/banned.h"

#define PROBE_MAX_TASKS 64
#define PROBE_PAGE 4096

/* A wake-up watched (a task parked on waiter, whose state at the stop
 * was state), or a step (a running task whose coroutine's state byte at
 * `at` reads `running` while the step lasts). */
struct probe {
	int step;
	uint64_t task, waiter;
	uint64_t state;       /* its waiter's, at the stop */
	uint64_t at, running;
	int done;
};

/* A word (8, 4 or 1 bytes) of the running target: 0, or -1 when it
 * cannot be read.  The backend reads whole pages, past the cache (which
 * holds the sample). */
static int live_word(struct memsrc *ms, uint64_t addr, size_t size,
		     uint64_t *out)
{
	unsigned char page[PROBE_PAGE];
	uint64_t base = addr & ~(uint64_t)(PROBE_PAGE - 1);
	size_t off = (size_t)(addr - base);
	struct cs_err err;
	long got;

	cs_err_init(&err);
	if (off + size > PROBE_PAGE)
		return -1;
	got = ms->ops->read_raw(ms, base, page, PROBE_PAGE, &err);
	if (got < 0 || (size_t)got < off + size)
		return -1;
	*out = size == 8 ? le_u64(page + off) :
	       size == 4 ? le_u32(page + off) : page[off];
	return 0;
}

/* The byte that says whether running task `task`'s coroutine still runs
 * its step, and its value while it does: 3.11 on its gi_frame_state,
 * 3.10 its frame's f_state, before its gi_running.  0 when not known. */
static int step_byte(const struct collection *c, const struct py_task *task,
		     uint64_t *at, uint64_t *running)
{
	const struct py_layout *L = &c->py.layout;
	const struct py_gen *g = task->nstack ?
		py_task_gen(&c->async, task, task->nstack - 1) : NULL;

	if (!g || g->state != PY_GEN_RUNNING)
		return 0;
	if (L->gen_frame_state >= 0) {
		*at = g->addr + (uint64_t)L->gen_frame_state;
		*running = (uint8_t)L->gs_executing;
	} else if (L->gen_running >= 0) {
		*at = g->addr + (uint64_t)L->gen_running;
		*running = 1;
	} else if (L->f_state >= 0 && g->has_frame) {
		*at = g->frame.addr + (uint64_t)L->f_state;
		*running = (uint8_t)L->gs_executing;
	} else {
		return 0;
	}
	return 1;
}

/* A parked task's wake-up to watch, into *q; 0 when not. */
static int wake_probe(const struct watch_tracker *t,
		      const struct collection *c, const struct py_task *task,
		      struct probe *q)
{
	const struct py_layout *L = &c->py.layout;
	const struct watch_item *it = watch_find(t, WATCH_TASK, task->addr);
	struct memsrc *ms = c->ms;
	unsigned char state[4];
	struct cs_err err;
	uint64_t v;

	if (L->task_fut_waiter < 0 || L->fut_state < 0 || !it || it->gone ||
	    !task->waiter ||
	    it->fingerprint != watch_task_fingerprint(&c->async, task))
		return 0;
	/* Only tasks with the C layout: the word at that offset in the
	 * sample is the waiter the reader found there. */
	cs_err_init(&err);
	if (memsrc_read_u64(ms, task->addr + (uint64_t)L->task_fut_waiter,
			    &v, &err) < 0 || v != task->waiter)
		return 0;
	/* (the sample's word: the backend's cache holds it) */
	if (memsrc_read(ms, task->waiter + (uint64_t)L->fut_state,
			state, sizeof(state), &err) < 0)
		return 0;
	memset(q, 0, sizeof(*q));
	q->task = task->addr;
	q->waiter = task->waiter;
	q->state = le_u32(state);
	return 1;
}

/* Has probe q seen what it watches for (a wake-up, a step's end)? -1
 * when it can no longer tell. */
static int probe_once(const struct collection *c, const struct probe *q)
{
	const struct py_layout *L = &c->py.layout;
	struct memsrc *ms = c->ms;
	uint64_t v;

	if (q->step) {
		if (live_word(ms, q->at, 1, &v) < 0)
			return -1;
		return v != q->running;
	}
	if (live_word(ms, q->task + (uint64_t)L->task_fut_waiter, 8, &v) < 0)
		return -1;
	return v != q->waiter ||
	       (live_word(ms, q->waiter + (uint64_t)L->fut_state, 4, &v) == 0 &&
		v != q->state);
}

/* Test aid (the man page's ENVIRONMENT): COROSCOPE_TEST_NO_STEP_PROBE=1
 * watches no running task's step, as when every turn of its loop falls
 * outside the probe's reads (a loaded machine). */
static int step_probe_off(void)
{
	const char *s = getenv("COROSCOPE_TEST_NO_STEP_PROBE");

	return s && !strcmp(s, "1");
}

void watch_probe_wakeups(const struct watch_tracker *t,
			 const struct collection *c, double budget_ms,
			 struct addrmap *woke, struct addrmap *ended)
{
	struct memsrc *ms = c->ms;
	struct probe p[PROBE_MAX_TASKS];
	size_t i, n = 0, left, steps;
	double deadline = cs_now_ms() + budget_ms;

	if (budget_ms <= 0 || !c->is_live || !ms || !ms->ops->read_raw)
		return;
	/* The running tasks first (a loop's thread runs one at most),
	 * then the parked ones. */
	for (i = 0; i < c->async.ntasks && n < PROBE_MAX_TASKS &&
		    !step_probe_off(); i++) {
		const struct py_task *task = &c->async.tasks[i];

		if (!task->running)
			continue;
		memset(&p[n], 0, sizeof(p[n]));
		p[n].step = 1;
		p[n].task = task->addr;
		n += step_byte(c, task, &p[n].at, &p[n].running);
	}
	steps = n;
	for (i = 0; i < c->async.ntasks && n < PROBE_MAX_TASKS; i++)
		if (!c->async.tasks[i].running)
			n += wake_probe(t, c, &c->async.tasks[i], &p[n]);
	/* bounded by the deadline, and by a count should the clock stall */
	for (left = n, i = 0; left && i < 1000000 && cs_now_ms() < deadline; i++) {
		struct probe *q = &p[i % n];
		int r;

		/* (steps end for a few microseconds only: they are read
		 * at every turn, the wake-ups at every eighth) */
		if (!q->step && (i / n) % 8 && steps)
			continue;

		/* (a target on our CPU runs meanwhile: a step ends only
		 * while its thread runs) */
		if (i % n == n - 1)
			sched_yield();
		if (q->done || !(r = probe_once(c, q)))
			continue;
		if (r > 0)
			addrmap_add(q->step ? ended : woke, q->task);
		q->done = 1;
		left--;
	}
}
