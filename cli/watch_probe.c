/*
 * The probe after a sample: see cli/watch_probe.h.
 */
#include "cli/watch_probe.h"

#include "cli/watch_sample.h"
#include "common/le.h"
#include "common/util.h"
#include "common/banned.h"

#define PROBE_MAX_TASKS 64
#define PROBE_PAGE 4096

struct probe {
	uint64_t task, waiter;
	uint64_t state;       /* its waiter's, at the stop */
	int done;
};

/* A word of the running target: 0, or -1 when it cannot be read.  The
 * backend reads whole pages, past the cache (which holds the sample). */
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
	*out = size == 8 ? le_u64(page + off) : le_u32(page + off);
	return 0;
}

void watch_probe_wakeups(const struct watch_tracker *t,
			 const struct collection *c, double budget_ms,
			 struct addrmap *woke)
{
	const struct py_layout *L = &c->py.layout;
	struct memsrc *ms = c->ms;
	struct probe p[PROBE_MAX_TASKS];
	size_t i, n = 0, left;
	double deadline = cs_now_ms() + budget_ms;

	if (budget_ms <= 0 || !c->is_live || !ms || !ms->ops->read_raw ||
	    L->task_fut_waiter < 0 || L->fut_state < 0)
		return;
	for (i = 0; i < c->async.ntasks && n < PROBE_MAX_TASKS; i++) {
		const struct py_task *task = &c->async.tasks[i];
		const struct watch_item *it = watch_find(t, WATCH_TASK,
							 task->addr);
		struct cs_err err;
		unsigned char state[4];
		uint64_t v;

		if (!it || it->gone || !task->waiter ||
		    it->fingerprint != watch_task_fingerprint(&c->async, task))
			continue;
		/* Only tasks with the C layout: the word at that offset in
		 * the sample is the waiter the reader found there. */
		cs_err_init(&err);
		if (memsrc_read_u64(ms, task->addr + (uint64_t)L->task_fut_waiter,
				    &v, &err) < 0 || v != task->waiter)
			continue;
		/* (the sample's word: the backend's cache holds it) */
		if (memsrc_read(ms, task->waiter + (uint64_t)L->fut_state,
				state, sizeof(state), &err) < 0)
			continue;
		p[n].task = task->addr;
		p[n].waiter = task->waiter;
		p[n].state = le_u32(state);
		p[n].done = 0;
		n++;
	}
	/* bounded by the deadline, and by a count should the clock stall */
	for (left = n, i = 0; left && i < 1000000 && cs_now_ms() < deadline; i++) {
		struct probe *q = &p[i % n];
		uint64_t v;

		if (q->done)
			continue;
		if (live_word(ms, q->task + (uint64_t)L->task_fut_waiter, 8, &v) < 0) {
			q->done = 1;
			left--;
			continue;
		}
		if (v == q->waiter &&
		    (live_word(ms, q->waiter + (uint64_t)L->fut_state, 4, &v) < 0 ||
		     v == q->state))
			continue;
		addrmap_add(woke, q->task);
		q->done = 1;
		left--;
	}
}
