#include "readers/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/gc.h"
#include "readers/objects.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Callbacks looked at per future, and items per closure or partial. */
#define MAX_CALLBACKS 4096
#define MAX_CLOSURE 64

/* What a type is, for the asyncio machinery. */
enum aio_class {
	AIO_NONE = 1,        /* stored +1 in the class cache: 0 means unknown */
	AIO_C_TASK,
	AIO_PY_TASK,
	AIO_C_FUTURE,
	AIO_PY_FUTURE,
	AIO_TASKGROUP,
};

struct aio_types {
	uint64_t c_task, c_future, py_task, py_future, taskgroup;
	struct addrmap classes;   /* type -> enum aio_class */
	/* The type classified last and its class: objects of one type
	 * often follow each other in the GC lists. */
	uint64_t last_type;
	enum aio_class last_class;
};

struct builder {
	struct pyproc *py;
	const struct py_snapshot *snap;
	const struct py_stack_options *opt;
	struct aio_types types;
	struct py_async *out;
	uint64_t *gen_addrs;      /* found by the GC walk */
	int *gen_kinds;
	size_t ngen, gen_alloc;
	uint64_t *task_addrs;
	int *task_classes;
	size_t ntask, task_alloc;
	size_t tasks_alloc, gens_alloc;
	long *next;               /* gens awaited (see index_awaiting()) */
	size_t nnext;
	struct addrmap waiters;   /* future -> struct addr_list * of tasks */
	struct addrmap loop_tids; /* loop -> tid + 1 */
	struct addrmap frame_gens;/* generator frame -> gen index + 1, built
				     on first need (running chains) */
	int frame_gens_built;
};

/* Lists longer than this also keep a set, so that adding stays O(1):
 * ten thousand tasks awaiting one future must not cost 10^8 compares. */
#define ADDR_LIST_SCAN 16

struct addr_list {
	uint64_t *v;
	size_t n, alloc;
	struct addrmap *set;      /* the same addresses, once n reaches
				     ADDR_LIST_SCAN (NULL before) */
};

static void addr_list_add(struct addr_list *l, uint64_t a)
{
	size_t i;

	if (l->set && a) {
		if (!addrmap_add(l->set, a))
			return;
	} else {
		/* (0 cannot be a set key: it is always looked up here.) */
		for (i = 0; i < l->n; i++)
			if (l->v[i] == a)
				return;
		if (!l->set && l->n >= ADDR_LIST_SCAN) {
			l->set = xmalloc(sizeof(*l->set));
			addrmap_init(l->set);
			for (i = 0; i < l->n; i++)
				if (l->v[i])
					addrmap_add(l->set, l->v[i]);
			if (a)
				addrmap_add(l->set, a);
		}
	}
	l->v = xgrow(l->v, &l->alloc, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = a;
}

static void addr_list_release(struct addr_list *l)
{
	free(l->v);
	if (l->set) {
		addrmap_release(l->set);
		free(l->set);
	}
	memset(l, 0, sizeof(*l));
}

const char *py_short_type_name(const char *tp_name)
{
	const char *dot = strrchr(tp_name, '.');

	return dot ? dot + 1 : tp_name;
}

static uint64_t module_attr(struct pyproc *py, uint64_t interp,
			    const char *module, const char *name)
{
	uint64_t dict, value;
	struct cs_err err;

	cs_err_init(&err);
	if (pymodule_dict(py, interp, module, &dict, &err) != 0 ||
	    pydict_get_str(py, dict, name, &value, &err) != 0)
		return 0;
	return value;
}

static void find_types(struct builder *b)
{
	struct aio_types *t = &b->types;
	struct cs_err err;
	uint64_t interp;

	addrmap_init(&t->classes);
	cs_err_init(&err);
	if (pyproc_interp_head(b->py, &interp, &err) < 0 || !interp)
		return;
	t->c_task = module_attr(b->py, interp, "_asyncio", "Task");
	t->c_future = module_attr(b->py, interp, "_asyncio", "Future");
	t->py_task = module_attr(b->py, interp, "asyncio.tasks", "_PyTask");
	t->py_future = module_attr(b->py, interp, "asyncio.futures", "_PyFuture");
	t->taskgroup = module_attr(b->py, interp, "asyncio.taskgroups",
				   "TaskGroup");
	/* Without the C accelerator, Task and Future are the Python ones. */
	if (!t->py_task)
		t->py_task = module_attr(b->py, interp, "asyncio.tasks", "Task");
	if (!t->py_future)
		t->py_future = module_attr(b->py, interp, "asyncio.futures",
					   "Future");
	if (t->py_task == t->c_task)
		t->py_task = 0;
	if (t->py_future == t->c_future)
		t->py_future = 0;
}

static enum aio_class classify(struct builder *b, uint64_t type)
{
	struct aio_types *t = &b->types;
	uintptr_t c;

	if (type && type == t->last_type)
		return t->last_class;
	c = (uintptr_t)addrmap_get(&t->classes, type, NULL);
	if (c) {
		t->last_type = type;
		t->last_class = (enum aio_class)c;
		return (enum aio_class)c;
	}
	if (!type)
		return AIO_NONE;
	if (t->c_task && pytype_is_subtype(b->py, type, t->c_task))
		c = AIO_C_TASK;
	else if (t->py_task && pytype_is_subtype(b->py, type, t->py_task))
		c = AIO_PY_TASK;
	else if (t->c_future && pytype_is_subtype(b->py, type, t->c_future))
		c = AIO_C_FUTURE;
	else if (t->py_future && pytype_is_subtype(b->py, type, t->py_future))
		c = AIO_PY_FUTURE;
	else if (t->taskgroup && pytype_is_subtype(b->py, type, t->taskgroup))
		c = AIO_TASKGROUP;
	else
		c = AIO_NONE;
	addrmap_put(&t->classes, type, (void *)c);
	return (enum aio_class)c;
}

static enum aio_class classify_obj(struct builder *b, uint64_t obj)
{
	struct cs_err err;
	uint64_t type;

	cs_err_init(&err);
	if (!obj || pyobj_read_type(b->py, obj, &type, &err) < 0)
		return AIO_NONE;
	return classify(b, type);
}

static int is_task_class(enum aio_class c)
{
	return c == AIO_C_TASK || c == AIO_PY_TASK;
}

static int is_future_class(enum aio_class c)
{
	return is_task_class(c) || c == AIO_C_FUTURE || c == AIO_PY_FUTURE;
}

static int visit(uint64_t obj, uint64_t type, void *data)
{
	struct builder *b = data;
	int kind = py_gen_kind_of_type(b->py, type);
	enum aio_class c;

	if (kind >= 0) {
		b->gen_addrs = xgrow(b->gen_addrs, &b->gen_alloc, b->ngen + 1,
				     sizeof(*b->gen_addrs));
		b->gen_kinds = xrealloc(b->gen_kinds,
					b->gen_alloc * sizeof(*b->gen_kinds));
		b->gen_addrs[b->ngen] = obj;
		b->gen_kinds[b->ngen++] = kind;
		return 0;
	}
	c = classify(b, type);
	if (is_task_class(c)) {
		b->task_addrs = xgrow(b->task_addrs, &b->task_alloc, b->ntask + 1,
				      sizeof(*b->task_addrs));
		b->task_classes = xrealloc(b->task_classes, b->task_alloc *
					   sizeof(*b->task_classes));
		b->task_addrs[b->ntask] = obj;
		b->task_classes[b->ntask++] = c;
	}
	return 0;
}

/* Index of the generator at addr in out->gens, reading it if the GC walk
 * did not list it; -1 if it is not a generator-like object. */
static long gen_at(struct builder *b, uint64_t addr)
{
	struct py_async *a = b->out;
	uintptr_t idx = (uintptr_t)addrmap_get(&a->gen_index, addr, NULL);
	struct cs_err err;
	uint64_t type;
	int kind;

	if (idx)
		return (long)idx - 1;
	cs_err_init(&err);
	if (!addr || pyobj_read_type(b->py, addr, &type, &err) < 0)
		return -1;
	kind = py_gen_kind_of_type(b->py, type);
	if (kind < 0)
		return -1;
	a->gens = xgrow(a->gens, &b->gens_alloc, a->ngens + 1, sizeof(*a->gens));
	if (py_gen_read(b->py, addr, (enum py_code_kind)kind, b->opt,
			&a->gens[a->ngens], &err) < 0)
		return -1;
	addrmap_put(&a->gen_index, addr, (void *)(uintptr_t)(a->ngens + 1));
	return (long)a->ngens++;
}

/* The fields of a task that both layouts provide. */
struct task_fields {
	int pending;
	uint64_t loop, coro, waiter, name, callback0, callbacks, awaited_by;
	long coro_gen;            /* index of coro in gens, or -1 */
};

static int read_c_task(struct builder *b, uint64_t addr,
		       struct task_fields *f, struct cs_err *err)
{
	const struct py_layout *L = &b->py->layout;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	size_t size = (size_t)L->task_size;
	int ret;

	if (size > sizeof(buf))
		CS_BUG("TaskObj of %zu bytes", size);
	ret = memsrc_read(b->py->ms, addr, buf, size, err);
	if (ret < 0)
		return ret;
	f->pending = field_i32(buf, size, L->fut_state) == 0;
	f->loop = field_u64(buf, size, L->fut_loop);
	f->coro = field_u64(buf, size, L->task_coro);
	f->waiter = field_u64(buf, size, L->task_fut_waiter);
	f->name = field_u64(buf, size, L->task_name);
	f->callback0 = field_u64(buf, size, L->fut_callback0);
	f->callbacks = field_u64(buf, size, L->fut_callbacks);
	f->awaited_by = field_u64(buf, size, L->fut_awaited_by);
	return 0;
}

static uint64_t attr(struct builder *b, uint64_t obj, const char *name)
{
	struct cs_err err;
	uint64_t v;

	cs_err_init(&err);
	return pyobj_lookup(b->py, obj, name, &v, &err) == 0 ? v : 0;
}

static int read_py_task(struct builder *b, uint64_t addr,
			struct task_fields *f)
{
	const struct py_layout *L = &b->py->layout;
	struct cs_err err;
	const char *state;
	uint64_t s, type;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];

	cs_err_init(&err);
	if (b->types.c_future && pyobj_read_type(b->py, addr, &type, &err) == 0 &&
	    pytype_is_subtype(b->py, type, b->types.c_future) &&
	    (size_t)L->fut_size <= sizeof(buf) &&
	    memsrc_read(b->py->ms, addr, buf, (size_t)L->fut_size, &err) == 0) {
		/* 3.6's Python Task derives from the C Future: the future's
		 * half is in C fields, the task's half in the instance dict. */
		f->pending = field_i32(buf, sizeof(buf), L->fut_state) == 0;
		f->loop = field_u64(buf, sizeof(buf), L->fut_loop);
		f->callback0 = field_u64(buf, sizeof(buf), L->fut_callback0);
		f->callbacks = field_u64(buf, sizeof(buf), L->fut_callbacks);
	} else {
		s = attr(b, addr, "_state");
		f->pending = s && pystr_get(b->py, s, &state, &err) == 0 &&
			     !strcmp(state, "PENDING");
		f->loop = attr(b, addr, "_loop");
		f->callbacks = attr(b, addr, "_callbacks");
	}
	f->coro = attr(b, addr, "_coro");
	f->waiter = attr(b, addr, "_fut_waiter");
	f->name = attr(b, addr, "_name");
	if (f->waiter == b->py->types.none)
		f->waiter = 0;
	return 0;
}

/* The task's name; without one, its coroutine's (generator coro_gen). */
static char *task_name(struct builder *b, uint64_t name, long coro_gen)
{
	const struct py_async *a = b->out;
	struct cs_err err;
	const char *s;
	uint64_t type;
	int64_t n;

	cs_err_init(&err);
	if (name && pyobj_read_type(b->py, name, &type, &err) == 0) {
		if (type == b->py->types.str && pystr_get(b->py, name, &s, &err) == 0)
			return xstrdup(s);
		/* 3.12+ names tasks lazily: a counter that reads "Task-N". */
		if (type == b->py->types.int_ &&
		    pyint_read_i64(b->py, name, &n, &err) == 0) {
			/* "Task-%lld" without printf: one per task adds up */
			char buf[32];
			size_t i = sizeof(buf);
			uint64_t u = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;

			buf[--i] = '\0';
			do {
				buf[--i] = (char)('0' + u % 10);
				u /= 10;
			} while (u);
			if (n < 0)
				buf[--i] = '-';
			i -= 5;
			memcpy(buf + i, "Task-", 5);
			return xstrdup(buf + i);
		}
	}
	if (coro_gen >= 0 && a->gens[coro_gen].qualname)
		return xstrdup(a->gens[coro_gen].qualname);
	return xstrdup("Task");
}

/* The items of a callbacks list: each a (callback, context) tuple from
 * 3.7, a bare callback in 3.6. */
static void callbacks_of(struct builder *b, const struct task_fields *f,
			 struct addr_list *out)
{
	uint64_t *items, first;
	size_t n = 0, i, one;
	struct cs_err err;

	cs_err_init(&err);
	if (f->callback0)
		addr_list_add(out, f->callback0);
	if (!f->callbacks || f->callbacks == b->py->types.none)
		return;
	if (pyseq_items(b->py, f->callbacks, NULL, 0, &n, &err) < 0 || !n)
		return;
	if (n > MAX_CALLBACKS)
		n = MAX_CALLBACKS;
	items = xmalloc(n * sizeof(*items));
	if (pyseq_items(b->py, f->callbacks, items, n, &n, &err) == 0) {
		for (i = 0; i < n && i < MAX_CALLBACKS; i++) {
			uint64_t type;

			if (pyobj_read_type(b->py, items[i], &type, &err) == 0 &&
			    type == b->py->types.tuple &&
			    pyseq_items(b->py, items[i], &first, 1, &one, &err) == 0 &&
			    one >= 1)
				addr_list_add(out, first);
			else
				addr_list_add(out, items[i]);
		}
	}
	free(items);
}

/*
 * Who completes when `child` completes, seen from one of its callbacks:
 * the tasks that are then woken (direct), and the futures and tasks
 * whose own waiters are then woken (via).
 */
static void callback_targets(struct builder *b, uint64_t child, uint64_t cb,
			     struct addr_list *direct, struct addr_list *via,
			     int depth)
{
	const struct py_layout *L = &b->py->layout;
	struct cs_err err;
	uint64_t type, self = 0, items[MAX_CLOSURE], tuple = 0;
	const char *name;
	size_t n = 0, i;

	cs_err_init(&err);
	if (pyobj_read_type(b->py, cb, &type, &err) < 0)
		return;
	name = py_type_name_cached(b->py, type);
	if (!strcmp(name, "builtin_function_or_method") && L->cfunction_self >= 0) {
		/* 3.10+: a task's bound task_wakeup */
		memsrc_read_u64(b->py->ms, cb + (uint64_t)L->cfunction_self,
				&self, &err);
		if (is_task_class(classify_obj(b, self)))
			addr_list_add(direct, self);
		return;
	}
	if (!strcmp(py_short_type_name(name), "TaskWakeupMethWrapper") &&
	    L->taskwakeup_task >= 0) {
		memsrc_read_u64(b->py->ms, cb + (uint64_t)L->taskwakeup_task,
				&self, &err);
		if (is_task_class(classify_obj(b, self)))
			addr_list_add(direct, self);
		return;
	}
	if (!strcmp(name, "method")) {
		enum aio_class c;

		memsrc_read_u64(b->py->ms, cb + (uint64_t)L->method_self, &self,
				&err);
		c = classify_obj(b, self);
		if (c == AIO_TASKGROUP) {
			uint64_t parent = attr(b, self, "_parent_task");

			if (is_task_class(classify_obj(b, parent)))
				addr_list_add(direct, parent);
		} else if (is_future_class(c) && self != child) {
			addr_list_add(via, self);
		}
		return;
	}
	if (!strcmp(name, "function") && L->func_closure >= 0) {
		/* gather's _done_callback, shield's and wait's closures */
		memsrc_read_u64(b->py->ms, cb + (uint64_t)L->func_closure, &tuple,
				&err);
		if (!tuple || tuple == b->py->types.none ||
		    pyseq_items(b->py, tuple, items, MAX_CLOSURE, &n, &err) < 0)
			return;
		if (n > MAX_CLOSURE)
			n = MAX_CLOSURE;
		for (i = 0; i < n; i++) {
			uint64_t v = 0;

			if (memsrc_read_u64(b->py->ms, items[i] +
					    (uint64_t)L->cell_ref, &v, &err) < 0)
				continue;
			if (v && v != child && is_future_class(classify_obj(b, v)))
				addr_list_add(via, v);
		}
		return;
	}
	if (!strcmp(name, "functools.partial") && L->partial_args >= 0) {
		/* wait_for before 3.12: partial(_release_waiter, waiter);
		 * 3.6 gather: partial(_done_callback, i), a closure */
		if (depth < 2 && L->partial_fn >= 0 &&
		    memsrc_read_u64(b->py->ms, cb + (uint64_t)L->partial_fn,
				    &self, &err) == 0 && self)
			callback_targets(b, child, self, direct, via, depth + 1);
		memsrc_read_u64(b->py->ms, cb + (uint64_t)L->partial_args, &tuple,
				&err);
		if (!tuple || pyseq_items(b->py, tuple, items, MAX_CLOSURE, &n,
					  &err) < 0)
			return;
		if (n > MAX_CLOSURE)
			n = MAX_CLOSURE;
		for (i = 0; i < n; i++)
			if (items[i] != child &&
			    is_future_class(classify_obj(b, items[i])))
				addr_list_add(via, items[i]);
	}
}

/* 3.14 records awaiters itself: a task, or a set of tasks. */
static void recorded_awaiters(struct builder *b, uint64_t awaited_by,
			      struct addr_list *direct)
{
	struct pydict_entry e[256];
	struct cs_err err;
	size_t used, i;
	uint64_t type;

	cs_err_init(&err);
	if (!awaited_by || pyobj_read_type(b->py, awaited_by, &type, &err) < 0)
		return;
	if (is_task_class(classify(b, type))) {
		addr_list_add(direct, awaited_by);
		return;
	}
	if ((type == b->py->types.set || type == b->py->types.frozenset) &&
	    pyset_entries(b->py, awaited_by, e, 256, &used, &err) == 0)
		for (i = 0; i < used && i < 256; i++)
			if (is_task_class(classify_obj(b, e[i].key)))
				addr_list_add(direct, e[i].key);
}

static void waiters_add(struct builder *b, uint64_t future, uint64_t task)
{
	struct addr_list *l = addrmap_get(&b->waiters, future, NULL);

	if (!l) {
		l = xcalloc(1, sizeof(*l));
		addrmap_put(&b->waiters, future, l);
	}
	addr_list_add(l, task);
}

static void add_waiters_of(struct builder *b, uint64_t future,
			   struct addr_list *out)
{
	struct addr_list *l = addrmap_get(&b->waiters, future, NULL);
	size_t i;

	for (i = 0; l && i < l->n; i++)
		addr_list_add(out, l->v[i]);
}

/*
 * Which loop each thread is running, as asyncio itself records it (so
 * that uvloop counts too): _PyThreadStateImpl.asyncio_running_loop from
 * 3.13, before that the thread state dict's
 * __asyncio_running_event_loop__ entry (a _RunningLoopHolder up to 3.11).
 */
static void note_running_loops(struct builder *b)
{
	const struct py_layout *L = &b->py->layout;
	struct cs_err err;
	size_t i;

	for (i = 0; i < b->snap->nthreads; i++) {
		const struct py_thread *t = &b->snap->threads[i];
		uint64_t loop = 0, dict, type;

		cs_err_init(&err);
		if (L->ts_asyncio_running_loop >= 0) {
			memsrc_read_u64(b->py->ms, t->tstate +
					(uint64_t)L->ts_asyncio_running_loop,
					&loop, &err);
		} else if (L->ts_dict >= 0 &&
			   memsrc_read_u64(b->py->ms, t->tstate + (uint64_t)L->ts_dict,
					   &dict, &err) == 0 && dict &&
			   pydict_get_str(b->py, dict, "__asyncio_running_event_loop__",
					  &loop, &err) == 0 && loop &&
			   pyobj_read_type(b->py, loop, &type, &err) == 0 &&
			   strstr(py_type_name_cached(b->py, type),
				  "RunningLoopHolder")) {
			/* rl_loop follows PyObject_HEAD */
			if (memsrc_read_u64(b->py->ms, loop + 16, &loop, &err) < 0)
				loop = 0;
		}
		if (loop && loop != b->py->types.none && t->tid)
			addrmap_put(&b->loop_tids, loop,
				    (void *)(uintptr_t)(t->tid + 1));
	}
}

/* The kernel tid of the thread running a loop: the running-loop records
 * above, else BaseEventLoop._thread_id; 0 when unknown. */
static int loop_tid(struct builder *b, uint64_t loop)
{
	struct cs_err err;
	uintptr_t cached;
	uint64_t id;
	int64_t ident;
	size_t i;
	int tid = 0;

	if (!loop)
		return 0;
	cached = (uintptr_t)addrmap_get(&b->loop_tids, loop, NULL);
	if (cached)
		return (int)cached - 1;
	cs_err_init(&err);
	id = attr(b, loop, "_thread_id");
	if (id && pyint_read_i64(b->py, id, &ident, &err) == 0)
		for (i = 0; i < b->snap->nthreads; i++)
			if (b->snap->threads[i].thread_id == (uint64_t)ident)
				tid = b->snap->threads[i].tid;
	addrmap_put(&b->loop_tids, loop, (void *)(uintptr_t)(tid + 1));
	return tid;
}

/* In next[]: not looked up yet (or not a generator the walk found). */
#define NEXT_UNKNOWN (-2)
/* Lookups started this many generators ahead of their use. */
#define PREFETCH_AHEAD 16

/*
 * For every generator, the index of the generator it awaits (-1: none),
 * looked up in one pass over the array before any chain is followed.
 * Following the chains one link after the other makes each lookup wait
 * for the previous one; in this pass the lookups are independent, and
 * the map's slots are prefetched a few generators ahead, so that with a
 * hundred thousand tasks the cache misses overlap.
 */
static void index_awaiting(struct builder *b)
{
	struct py_async *a = b->out;
	size_t i, n = a->ngens;

	b->next = xmalloc((n ? n : 1) * sizeof(*b->next));
	b->nnext = n;
	for (i = 0; i < n; i++) {
		uint64_t at = a->gens[i].awaiting;
		uintptr_t k;

		if (i + PREFETCH_AHEAD < n)
			addrmap_prefetch(&a->gen_index,
					 a->gens[i + PREFETCH_AHEAD].awaiting);
		k = at ? (uintptr_t)addrmap_get(&a->gen_index, at, NULL) : 0;
		b->next[i] = k ? (long)k - 1 : at ? NEXT_UNKNOWN : -1;
	}
}

/* The generator that generator idx awaits, or -1. */
static long next_gen(struct builder *b, size_t idx)
{
	long k;

	if (idx < b->nnext && b->next[idx] != NEXT_UNKNOWN)
		return b->next[idx];
	/* Not one the walk listed: read it (gen_at may append it). */
	k = gen_at(b, b->out->gens[idx].awaiting);
	if (idx < b->nnext)
		b->next[idx] = k;
	return k;
}

/* Links of a chain checked for a loop by scanning, before a set is
 * built: real chains are short, and a set per task costs allocations. */
#define CHAIN_SCAN 32

/* Follow the await chain from the task's coroutine (generator first)
 * down. */
static void build_frame_gens(struct builder *b)
{
	const struct py_async *a = b->out;
	size_t i;

	b->frame_gens_built = 1;
	for (i = 0; i < a->ngens; i++)
		if (a->gens[i].has_frame && a->gens[i].frame.addr)
			addrmap_put(&b->frame_gens, a->gens[i].frame.addr,
				    (void *)(uintptr_t)(i + 1));
}

/* Append to chain the generators whose frames run inside the frame of
 * its last (running) member, as the thread stacks show them. */
static void extend_running(struct builder *b, struct py_task *t,
			   size_t **chain, size_t *n, size_t *alloc)
{
	struct py_async *a = b->out;
	uint64_t frame = a->gens[(*chain)[*n - 1]].frame.addr;
	size_t i, k, j;

	if (!a->gens[(*chain)[*n - 1]].has_frame || !frame)
		return;
	if (!b->frame_gens_built)
		build_frame_gens(b);
	for (i = 0; i < b->snap->nthreads; i++) {
		const struct py_thread *th = &b->snap->threads[i];

		for (k = 0; k < th->nframes && th->frames[k].addr != frame; k++)
			;
		if (k == th->nframes)
			continue;
		/* frames are innermost first: walk inward from k */
		for (j = k; j-- > 0 && *n < PY_MAX_CHAIN;) {
			uintptr_t gi = (uintptr_t)addrmap_get(&b->frame_gens,
							      th->frames[j].addr, NULL);

			if (!gi)
				break;  /* a plain call: the await chain ends */
			*chain = xgrow(*chain, alloc, *n + 1, sizeof(**chain));
			(*chain)[(*n)++] = gi - 1;
			if (!a->gens[gi - 1].task)
				a->gens[gi - 1].task = t->addr;
		}
		return;
	}
}

static void build_stack(struct builder *b, struct py_task *t, long first)
{
	struct py_async *a = b->out;
	size_t *chain = NULL, n = 0, alloc = 0, i;
	struct addrmap seen;
	long idx = first, seen_first[CHAIN_SCAN];

	addrmap_init(&seen);
	while (idx >= 0 && n < PY_MAX_CHAIN) {
		/* A loop: a generator met twice (set keys are index + 1). */
		if (n < CHAIN_SCAN) {
			for (i = 0; i < n && seen_first[i] != idx; i++)
				;
			if (i < n)
				break;
			seen_first[n] = idx;
		} else {
			for (i = 0; n == CHAIN_SCAN && i < CHAIN_SCAN; i++)
				addrmap_add(&seen, (uint64_t)seen_first[i] + 1);
			if (!addrmap_add(&seen, (uint64_t)idx + 1))
				break;
		}
		chain = xgrow(chain, &alloc, n + 1, sizeof(*chain));
		chain[n++] = (size_t)idx;
		if (!a->gens[idx].task)
			a->gens[idx].task = t->addr;
		idx = next_gen(b, (size_t)idx);
	}
	addrmap_release(&seen);
	/* A running coroutine reports no delegate: what it awaits is on
	 * its thread's stack, frame by frame, inside its own frame. */
	if (n && a->gens[chain[n - 1]].state == PY_GEN_RUNNING)
		extend_running(b, t, &chain, &n, &alloc);
	if (n && a->gens[chain[0]].state == PY_GEN_RUNNING)
		t->running = 1;
	/* innermost first */
	t->stack = xmalloc((n ? n : 1) * sizeof(*t->stack));
	for (i = 0; i < n; i++)
		t->stack[i] = chain[n - 1 - i];
	t->nstack = n;
	free(chain);
}

/* Tarjan's strongly connected components, iteratively: an await cycle is
 * a component of two or more tasks (or one that awaits itself). */
struct scc {
	size_t n;
	size_t **adj;       /* out-edges: tasks this one awaits */
	size_t *nadj;
	long *index, *low;
	int *on_stack;
	size_t *stack, sp;
	long counter;
};

static void report_cycle(struct py_async *a, struct scc *s, size_t *members,
			 size_t nm)
{
	/* Walk from the first member along edges that stay inside the
	 * component until we come back: one concrete cycle to name. */
	size_t start = members[0], cur = start, len = 0, i, k;
	size_t *path = xmalloc((nm + 1) * sizeof(*path));
	char *in = xcalloc(s->n, 1);
	char *used = xcalloc(s->n, 1);

	for (i = 0; i < nm; i++)
		in[members[i]] = 1;
	path[len++] = start;
	used[start] = 1;
	while (len <= nm) {
		size_t next = (size_t)-1;

		for (k = 0; k < s->nadj[cur]; k++) {
			size_t v = s->adj[cur][k];

			if (v == start && len > 1) {
				next = start;
				break;
			}
			if (in[v] && !used[v] && next == (size_t)-1)
				next = v;
		}
		if (next == start || next == (size_t)-1)
			break;
		path[len++] = next;
		used[next] = 1;
		cur = next;
	}
	a->cycles = xrealloc(a->cycles, (a->ncycles + 1) * sizeof(*a->cycles));
	a->cycle_len = xrealloc(a->cycle_len,
				(a->ncycles + 1) * sizeof(*a->cycle_len));
	a->cycles[a->ncycles] = xmalloc(len * sizeof(uint64_t));
	for (i = 0; i < len; i++)
		a->cycles[a->ncycles][i] = a->tasks[path[i]].addr;
	a->cycle_len[a->ncycles++] = len;
	free(path);
	free(in);
	free(used);
}

static void find_cycles(struct py_async *a)
{
	struct scc s;
	size_t i, j, v;
	size_t *work, *edge, wp;

	memset(&s, 0, sizeof(s));
	s.n = a->ntasks;
	if (!s.n)
		return;
	s.adj = xcalloc(s.n, sizeof(*s.adj));
	s.nadj = xcalloc(s.n, sizeof(*s.nadj));
	/* A awaits B when A is in B's awaited_by. */
	for (i = 0; i < s.n; i++) {
		for (j = 0; j < a->tasks[i].nawaited_by; j++) {
			uintptr_t k = (uintptr_t)addrmap_get(&a->task_index,
							     a->tasks[i].awaited_by[j],
							     NULL);

			if (!k)
				continue;
			s.adj[k - 1] = xrealloc(s.adj[k - 1], (s.nadj[k - 1] + 1) *
						sizeof(**s.adj));
			s.adj[k - 1][s.nadj[k - 1]++] = i;
		}
	}
	s.index = xmalloc(s.n * sizeof(*s.index));
	s.low = xmalloc(s.n * sizeof(*s.low));
	s.on_stack = xcalloc(s.n, sizeof(*s.on_stack));
	s.stack = xmalloc(s.n * sizeof(*s.stack));
	work = xmalloc(s.n * sizeof(*work));
	edge = xmalloc(s.n * sizeof(*edge));
	for (i = 0; i < s.n; i++)
		s.index[i] = -1;
	for (i = 0; i < s.n; i++) {
		if (s.index[i] >= 0)
			continue;
		wp = 0;
		work[wp] = i;
		edge[wp++] = 0;
		s.index[i] = s.low[i] = s.counter++;
		s.stack[s.sp++] = i;
		s.on_stack[i] = 1;
		while (wp) {
			size_t u = work[wp - 1];

			if (edge[wp - 1] < s.nadj[u]) {
				v = s.adj[u][edge[wp - 1]++];
				if (s.index[v] < 0) {
					s.index[v] = s.low[v] = s.counter++;
					s.stack[s.sp++] = v;
					s.on_stack[v] = 1;
					work[wp] = v;
					edge[wp++] = 0;
				} else if (s.on_stack[v] && s.index[v] < s.low[u]) {
					s.low[u] = s.index[v];
				}
				continue;
			}
			wp--;
			if (wp && s.low[u] < s.low[work[wp - 1]])
				s.low[work[wp - 1]] = s.low[u];
			if (s.low[u] == s.index[u]) {
				size_t first = s.sp, self_loop = 0, nm;

				do {
					v = s.stack[--first];
					s.on_stack[v] = 0;
				} while (v != u);
				nm = s.sp - first;
				for (j = 0; j < s.nadj[u]; j++)
					self_loop |= s.adj[u][j] == u;
				if (nm > 1 || self_loop)
					report_cycle(a, &s, s.stack + first, nm);
				s.sp = first;
			}
		}
	}
	for (i = 0; i < s.n; i++)
		free(s.adj[i]);
	free(s.adj);
	free(s.nadj);
	free(s.index);
	free(s.low);
	free(s.on_stack);
	free(s.stack);
	free(work);
	free(edge);
}

static void builder_release(struct builder *b)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (addrmap_next(&b->waiters, &pos, &key, &val)) {
		struct addr_list *l = val;

		addr_list_release(l);
		free(l);
	}
	addrmap_release(&b->waiters);
	addrmap_release(&b->loop_tids);
	addrmap_release(&b->frame_gens);
	addrmap_release(&b->types.classes);
	free(b->gen_addrs);
	free(b->gen_kinds);
	free(b->task_addrs);
	free(b->task_classes);
	free(b->next);
}

int py_async_take(struct pyproc *py, const struct py_snapshot *snap,
		  const struct py_stack_options *opt, struct py_async *out,
		  struct cs_err *err)
{
	struct builder b;
	struct task_fields *fields;
	size_t i, j;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	addrmap_init(&out->gen_index);
	addrmap_init(&out->task_index);
	addrmap_init(&b.waiters);
	addrmap_init(&b.loop_tids);
	addrmap_init(&b.frame_gens);
	b.py = py;
	b.snap = snap;
	b.opt = opt;
	b.out = out;
	find_types(&b);
	note_running_loops(&b);
	ret = py_gc_walk(py, visit, &b, err);
	if (ret < 0) {
		builder_release(&b);
		return ret;
	}
	/* Generators first, so that chains find them by address. */
	addrmap_reserve(&out->gen_index, b.ngen);
	out->gens = xcalloc(b.ngen ? b.ngen : 1, sizeof(*out->gens));
	b.gens_alloc = b.ngen ? b.ngen : 1;
	for (i = 0; i < b.ngen; i++) {
		struct cs_err gerr;

		if (i + PREFETCH_AHEAD < b.ngen)
			addrmap_prefetch(&out->gen_index,
					 b.gen_addrs[i + PREFETCH_AHEAD]);
		cs_err_init(&gerr);
		if (py_gen_read(py, b.gen_addrs[i], (enum py_code_kind)b.gen_kinds[i],
				opt, &out->gens[out->ngens], &gerr) < 0)
			continue;   /* freed or half-built: skip it */
		addrmap_put(&out->gen_index, b.gen_addrs[i],
			    (void *)(uintptr_t)(out->ngens + 1));
		out->ngens++;
	}
	/* Pending tasks. */
	fields = xcalloc(b.ntask ? b.ntask : 1, sizeof(*fields));
	out->tasks = xcalloc(b.ntask ? b.ntask : 1, sizeof(*out->tasks));
	addrmap_reserve(&out->task_index, b.ntask);
	/* Their fields first, so that the lookups of their coroutines can be
	 * prefetched below (fields[] is then compacted to the pending ones,
	 * in the order of out->tasks). */
	for (i = 0; i < b.ntask; i++) {
		struct cs_err terr;

		cs_err_init(&terr);
		if (b.task_classes[i] == AIO_C_TASK) {
			if (read_c_task(&b, b.task_addrs[i], &fields[i], &terr) < 0)
				fields[i].pending = 0;
		} else {
			read_py_task(&b, b.task_addrs[i], &fields[i]);
		}
	}
	for (i = 0; i < b.ntask; i++) {
		struct task_fields *f = &fields[out->ntasks];
		struct py_task *t = &out->tasks[out->ntasks];
		struct cs_err terr;
		long cidx;

		if (i + PREFETCH_AHEAD < b.ntask)
			addrmap_prefetch(&out->gen_index,
					 fields[i + PREFETCH_AHEAD].coro);
		if (!fields[i].pending)
			continue;
		*f = fields[i];   /* out->ntasks <= i */
		cs_err_init(&terr);
		t->addr = b.task_addrs[i];
		t->loop = f->loop;
		t->coro = f->coro;
		t->waiter = f->waiter;
		if (t->waiter) {
			uint64_t wt;

			if (pyobj_read_type(py, t->waiter, &wt, &terr) == 0)
				t->waiter_type =
					py_short_type_name(py_type_name_cached(py, wt));
			waiters_add(&b, t->waiter, t->addr);
		}
		cidx = gen_at(&b, t->coro);
		f->coro_gen = cidx;
		t->name = task_name(&b, f->name, cidx);
		t->tid = loop_tid(&b, t->loop);
		addrmap_put(&out->task_index, t->addr,
			    (void *)(uintptr_t)(out->ntasks + 1));
		out->ntasks++;
	}
	/* Chains, then who awaits whom. */
	index_awaiting(&b);
	for (i = 0; i < out->ntasks; i++)
		build_stack(&b, &out->tasks[i], fields[i].coro_gen);
	for (i = 0; i < out->ntasks; i++) {
		struct py_task *t = &out->tasks[i];
		struct addr_list cbs = { 0 }, direct = { 0 }, via = { 0 };

		add_waiters_of(&b, t->addr, &direct);
		recorded_awaiters(&b, fields[i].awaited_by, &direct);
		callbacks_of(&b, &fields[i], &cbs);
		for (j = 0; j < cbs.n; j++)
			callback_targets(&b, t->addr, cbs.v[j], &direct, &via, 0);
		for (j = 0; j < via.n; j++)
			add_waiters_of(&b, via.v[j], &direct);
		/* A task is not its own awaiter through its own callbacks. */
		t->awaited_by = xmalloc((direct.n ? direct.n : 1) * sizeof(uint64_t));
		for (j = 0; j < direct.n; j++)
			if (direct.v[j] != t->addr || t->waiter == t->addr)
				t->awaited_by[t->nawaited_by++] = direct.v[j];
		addr_list_release(&cbs);
		addr_list_release(&direct);
		addr_list_release(&via);
	}
	find_cycles(out);
	free(fields);
	builder_release(&b);
	return 0;
}

const struct py_task *py_async_task(const struct py_async *a, uint64_t addr)
{
	uintptr_t k = (uintptr_t)addrmap_get(&a->task_index, addr, NULL);

	return k ? &a->tasks[k - 1] : NULL;
}

void py_async_release(struct py_async *a)
{
	size_t i;

	for (i = 0; i < a->ngens; i++)
		py_gen_release(&a->gens[i]);
	free(a->gens);
	for (i = 0; i < a->ntasks; i++) {
		free(a->tasks[i].name);
		free(a->tasks[i].stack);
		free(a->tasks[i].awaited_by);
	}
	free(a->tasks);
	for (i = 0; i < a->ncycles; i++)
		free(a->cycles[i]);
	free(a->cycles);
	free(a->cycle_len);
	addrmap_release(&a->gen_index);
	addrmap_release(&a->task_index);
	memset(a, 0, sizeof(*a));
}
