#include "readers/trio.h"

#include <stdlib.h>
#include <string.h>

#include "common/addrmap.h"
#include "common/le.h"
#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/gc.h"
#include "readers/gens.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/banned.h"


struct trio_slots {
	int name, coro, parent_nursery, runner;
};

static int visit(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct py_trio_scan *b = data;

	/* Task is final (attrs, @final): its exact type, no subclasses. */
	if (type != b->task_type)
		return 0;
	if (b->n >= PY_MAX_TRIO_TASKS) {
		b->too_many = 1;
		return 1;
	}
	b->addrs = xgrow(b->addrs, &b->alloc, b->n + 1, sizeof(*b->addrs));
	b->addrs[b->n++] = obj;
	return 0;
}

#define MAX_SLOT_OFFSET 4096   /* bytes of a Task copied at most */

/* The offset of slot `name` of obj's class, from its member descriptor. */
static int slot_offset(struct pyproc *py, uint64_t obj, const char *name,
		       int *off, struct cs_err *err)
{
	return pyobj_slot_offset(py, obj, name, off, err);
}

static int find_slots(struct pyproc *py, uint64_t task,
		      struct trio_slots *s, struct cs_err *err)
{
	int ret;

	ret = slot_offset(py, task, "name", &s->name, err);
	if (ret == 0)
		ret = slot_offset(py, task, "coro", &s->coro, err);
	if (ret == 0)
		ret = slot_offset(py, task, "_parent_nursery",
				  &s->parent_nursery, err);
	if (ret == 0)
		ret = slot_offset(py, task, "_runner", &s->runner, err);
	return ret;
}

static long gen_index(const struct py_async *a, uint64_t addr)
{
	uintptr_t k = addr ? (uintptr_t)addrmap_get(&a->gen_index, addr, NULL) : 0;

	return k ? (long)k - 1 : -1;
}

/* The thread inside trio.run() (or its unrolled_run), if only one is. */
static int trio_tid(struct pyproc *py, const struct py_snapshot *snap)
{
	const struct py_code *run, *unrolled;
	size_t i, k;
	int tid = 0;

	run = py_function_code(py, py_module_attr(py, "trio._core._run", "run"));
	unrolled = py_function_code(py, py_module_attr(py, "trio._core._run",
						    "unrolled_run"));
	for (i = 0; (run || unrolled) && i < snap->nthreads; i++) {
		const struct py_thread *t = &snap->threads[i];

		for (k = 0; k < t->nframes; k++) {
			if (t->frames[k].code != run &&
			    t->frames[k].code != unrolled)
				continue;
			if (tid)
				return 0;   /* several runs: do not guess */
			tid = t->tid;
			break;
		}
	}
	return tid;
}

/* The chain from the task's coroutine, innermost first, in a->pool. */
static void build_chain(struct py_async *a, struct py_task *t, long first)
{
	size_t *chain = NULL, n = 0, alloc = 0, i;
	long idx = first;
	struct py_chain_seen seen;

	py_chain_seen_init(&seen);
	/* (stops at a cycle: a generator met twice) */
	while (idx >= 0 && n < PY_MAX_CHAIN && py_chain_seen_add(&seen, idx)) {
		chain = xgrow(chain, &alloc, n + 1, sizeof(*chain));
		chain[n++] = (size_t)idx;
		py_async_set_owner(a, (size_t)idx, t->addr);
		idx = gen_index(a, a->gens[idx].awaiting);
	}
	a->chains_cut += idx >= 0 && n == PY_MAX_CHAIN;
	py_chain_seen_release(&seen);
	/* collected outermost first */
	t->stack = arena_allocarray(&a->pool, n, sizeof(*t->stack));
	for (i = 0; i < n; i++)
		t->stack[i] = chain[n - 1 - i];
	t->nstack = n;
	free(chain);
}

/* In a->pool, as asyncio's tasks' names. */
static char *task_name(struct pyproc *py, uint64_t name, long coro,
		       struct py_async *a)
{
	const char *s;
	struct cs_err err;

	cs_err_init(&err);
	if (name && pystr_get(py, name, &s, &err) == 0)
		return arena_strdup(&a->pool, s);
	return arena_strdup(&a->pool, coro >= 0 && a->gens[coro].qualname ?
			    a->gens[coro].qualname : "?");
}

int py_trio_prepare(struct pyproc *py, struct py_trio_scan *b,
		    struct py_gc_visit *v)
{
	memset(b, 0, sizeof(*b));
	b->py = py;
	b->task_type = py_module_attr(py, "trio._core._run", "Task");
	if (!b->task_type)
		return 0;
	v->fn = visit;
	v->data = b;
	return 1;
}

void py_trio_scan_release(struct py_trio_scan *b)
{
	free(b->addrs);
	memset(b, 0, sizeof(*b));
}

int py_trio_take(struct pyproc *py, const struct py_snapshot *snap,
		 struct py_async *a, struct cs_err *err)
{
	struct py_trio_scan s;
	struct py_gc_visit v;
	int ret = 0;

	if (py_trio_prepare(py, &s, &v))
		ret = py_gc_walk_each(py, &v, 1, err);
	if (ret == 0)
		ret = py_trio_finish(&s, snap, a, err);
	py_trio_scan_release(&s);
	return ret;
}

int py_trio_finish(struct py_trio_scan *b, const struct py_snapshot *snap,
		   struct py_async *a, struct cs_err *err)
{
	struct pyproc *py = b->py;
	struct trio_slots s;
	size_t i, first, alloc;
	int ret = 0, tid;

	if (!b->task_type || !b->n)
		return 0;
	if (b->too_many)
		return cs_fail(err, CS_ERR_MEMORY, "more than %u trio tasks",
			       PY_MAX_TRIO_TASKS);
	ret = find_slots(py, b->addrs[0], &s, err);
	if (ret < 0)
		return ret;
	tid = trio_tid(py, snap);
	first = a->ntasks;
	alloc = a->ntasks;
	for (i = 0; i < b->n; i++) {
		uint8_t buf[MAX_SLOT_OFFSET];
		size_t size = (size_t)s.name;
		struct py_task *t;
		struct cs_err terr;
		uint64_t coro;
		long cidx;

		if ((size_t)s.coro > size) size = (size_t)s.coro;
		if ((size_t)s.parent_nursery > size) size = (size_t)s.parent_nursery;
		if ((size_t)s.runner > size) size = (size_t)s.runner;
		size += 8;
		cs_err_init(&terr);
		if (memsrc_read(py->ms, b->addrs[i], buf, size, &terr) < 0)
			continue;
		coro = le_u64(buf + s.coro);
		cidx = gen_index(a, coro);
		/* A finished task keeps a closed coroutine (or none). */
		if (cidx < 0 || a->gens[cidx].state == PY_GEN_CLOSED)
			continue;
		a->tasks = xgrow(a->tasks, &alloc, a->ntasks + 1,
				 sizeof(*a->tasks));
		t = &a->tasks[a->ntasks];
		memset(t, 0, sizeof(*t));
		t->addr = b->addrs[i];
		t->framework = "trio";
		t->cancels_requested = -1;  /* (asyncio's count) */
		t->coro = coro;
		t->loop = le_u64(buf + s.runner);
		t->nursery = le_u64(buf + s.parent_nursery);
		if (t->nursery == py->types.none)
			t->nursery = 0;   /* the root task's */
		t->name = task_name(py, le_u64(buf + s.name), cidx, a);
		t->running = a->gens[cidx].state == PY_GEN_RUNNING;
		t->tid = tid;
		build_chain(a, t, cidx);
		addrmap_put(&a->task_index, t->addr,
			    (void *)(uintptr_t)(a->ntasks + 1));
		a->ntasks++;
	}
	/* Each task is awaited by the task whose nursery it runs in (the
	 * nursery's __aexit__ waits for its children). */
	for (i = first; i < a->ntasks; i++) {
		struct py_task *t = &a->tasks[i];
		struct cs_err terr;
		uint64_t parent;

		t->awaited_by = arena_alloc(&a->pool, sizeof(*t->awaited_by));
		cs_err_init(&terr);
		if (t->nursery &&
		    pyobj_get_attr(py, t->nursery, "_parent_task", &parent,
				   &terr) == 0 &&
		    py_async_task(a, parent))
			t->awaited_by[t->nawaited_by++] = parent;
	}
	py_trio_read_timers(py, a, first);
	py_trio_read_io(py, a, first);
	return 0;
}
