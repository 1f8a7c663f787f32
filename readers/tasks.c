#include "readers/tasks.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/aio_class.h"
#include "readers/awaiters.h"
#include "readers/task_cycles.h"
#include "readers/fields.h"
#include "readers/gc.h"
#include "readers/gens_many.h"
#include "readers/tasks_internal.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/strbuf.h"
#include "common/banned.h"

const char *py_short_type_name(const char *tp_name)
{
	const char *dot = strrchr(tp_name, '.');

	return dot ? dot + 1 : tp_name;
}

static void found_add(struct found **v, size_t *n, size_t *alloc,
		      uint64_t addr, int what, int64_t interp_id)
{
	/* xgrow doubles: one realloc per visited object made a million
	 * generators quadratic under ASan, whose realloc always copies. */
	*v = xgrow(*v, alloc, *n + 1, sizeof(**v));
	(*v)[*n].addr = addr;
	(*v)[*n].interp_id = interp_id;
	(*v)[(*n)++].what = what;
}

/* The id of the interpreter the walk is in; before 3.9 the walk cannot
 * tell (one collector for all), which only matters when there are
 * several: then -1. */
static int64_t walk_interp_id(struct builder *b, uint64_t interp)
{
	uint64_t id;

	if (!interp)
		return b->snap->ninterps > 1 ? -1 : 0;
	if (interp != b->interp) {
		b->interp = interp;
		b->interp_id = py_field_u64(b->py, interp, b->py->layout.is_id,
					    &id, NULL) < 0 ? -1 : (int64_t)id;
	}
	return b->interp_id;
}

static void set_interp(int64_t id, int64_t *interp_id, int *interp_main)
{
	*interp_id = id;
	*interp_main = id < 0 ? -1 : id == 0;
}

/* The GC walk's visitor: note generators and tasks. */
static int visit(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct builder *b = data;
	int kind = py_gen_kind_of_type(b->py, type);
	enum aio_class c;

	if (kind >= 0) {
		found_add(&b->gens, &b->ngen, &b->gen_alloc, obj, kind,
			  walk_interp_id(b, interp));
		return 0;
	}
	c = aio_classify(&b->types, type);
	if (aio_is_task(c))
		found_add(&b->tasks, &b->ntask, &b->task_alloc, obj, (int)c,
			  walk_interp_id(b, interp));
	else if (c == AIO_CF_FUTURE || c == AIO_MP_RESULT) {
		if (b->njob < MAX_JOBS_LOOKED_AT)
			found_add(&b->jobs, &b->njob, &b->job_alloc, obj,
				  (int)c, walk_interp_id(b, interp));
		else
			b->jobs_more++;
	}
	return 0;
}

/* Tasks on one of 3.14's llist task lists (a circular list through
 * TaskObj.task_node) that the GC walk did not already report. */
#define TASK_LIST_MAX 65536

static void add_list(struct builder *b, struct addrmap *seen, uint64_t head,
		     int64_t interp_id)
{
	const struct py_layout *L = &b->py->layout;
	uint64_t node, type;
	enum aio_class c;
	int n;

	if (py_field_u64(b->py, head, 0, &node, NULL) != 1)
		return;
	for (n = 0; node && node != head && n < TASK_LIST_MAX; n++) {
		uint64_t task = node - (uint64_t)L->task_node;

		if (addrmap_add(seen, task) &&
		    pyobj_read_type(b->py, task, &type, NULL) == 0 &&
		    aio_is_task(c = aio_classify(&b->types, type)))
			found_add(&b->tasks, &b->ntask, &b->task_alloc, task,
				  (int)c, interp_id);
		if (py_field_u64(b->py, node, 0, &node, NULL) != 1)
			return;
	}
}

/*
 * 3.14 keeps every C task on its thread's list, and the leftovers of
 * exited threads on the interpreter's: a second source next to the GC
 * walk (best effort: a list that cannot be followed adds nothing).
 */
static void add_listed_tasks(struct builder *b)
{
	const struct py_layout *L = &b->py->layout;
	struct addrmap seen;
	size_t i;

	if (L->ts_asyncio_tasks_head < 0 || L->task_node < 0)
		return;
	addrmap_init(&seen);
	/* The walk's tasks, then as many listed (a list usually holds the
	 * same ones) and each interpreter. */
	addrmap_reserve(&seen, b->ntask + b->snap->nthreads);
	for (i = 0; i < b->ntask; i++)
		addrmap_add(&seen, b->tasks[i].addr);
	for (i = 0; i < b->snap->nthreads; i++) {
		const struct py_thread *t = &b->snap->threads[i];

		add_list(b, &seen, t->tstate + (uint64_t)L->ts_asyncio_tasks_head,
			 t->interp_id);
		/* each interpreter once: after its first thread */
		if (L->is_asyncio_tasks_head >= 0 && t->interp &&
		    addrmap_add(&seen, t->interp))
			add_list(b, &seen,
				 t->interp + (uint64_t)L->is_asyncio_tasks_head,
				 t->interp_id);
	}
	addrmap_release(&seen);
}

/* Index of the generator at addr in out->gens, reading it if the GC walk
 * did not list it (then it is in interpreter interp_id, its awaiter's);
 * -1 if it is not a generator-like object. */
long tasks_gen_at(struct builder *b, uint64_t addr, int64_t interp_id)
{
	struct py_async *a = b->out;
	uintptr_t idx = (uintptr_t)addrmap_get(&a->gen_index, addr, NULL);
	uint64_t type;
	int kind;

	if (idx)
		return (long)idx - 1;
	if (!addr || pyobj_read_type(b->py, addr, &type, NULL) < 0)
		return -1;
	kind = py_gen_kind_of_type(b->py, type);
	if (kind < 0)
		return -1;
	a->gens = xgrow_lines(a->gens, &b->gens_alloc, a->ngens + 1,
			      sizeof(*a->gens));
	if (py_gen_read(b->py, addr, (enum py_code_kind)kind, b->opt,
			&a->gens[a->ngens], NULL) < 0)
		return -1;
	set_interp(interp_id, &a->gens[a->ngens].interp_id,
		   &a->gens[a->ngens].interp_main);
	addrmap_put(&a->gen_index, addr, (void *)(uintptr_t)(a->ngens + 1));
	return (long)a->ngens++;
}

/* fut_state's values, the same in every version's _asyncio. */
enum { FUT_PENDING, FUT_CANCELLED, FUT_FINISHED };

/* A C future's state, and its exception when it ended with one, from
 * its first bytes. */
static void c_future_state(const struct py_layout *L, const uint8_t *buf,
			   size_t size, struct task_fields *f)
{
	int state = field_i32(buf, size, L->fut_state);
	int bit = L->fut_log_tb_bit;

	f->pending = state == FUT_PENDING;
	if (state != FUT_FINISHED || L->fut_exception < 0)
		return;
	f->exception = field_u64(buf, size, L->fut_exception);
	f->log_tb = bit >= 0 &&
		    (field_u8(buf, size, bit / 8) >> (bit % 8)) & 1;
}

/* The same of a Python future (asyncio.futures.Future's attributes),
 * its state read as FINISHED. */
static void py_future_failure(struct pyproc *py, uint64_t addr,
			      struct task_fields *f)
{
	uint64_t exc = pyobj_lookup_or_0(py, addr, "_exception"), flag;

	if (!exc || exc == py->types.none)
		return;
	f->exception = exc;
	/* 3.7 on keep it private (a property reads it), 3.6 plain */
	flag = pyobj_lookup_or_0(py, addr, "_Future__log_traceback");
	if (!flag)
		flag = pyobj_lookup_or_0(py, addr, "_log_traceback");
	f->log_tb = flag == py->types.true_;
}

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
	c_future_state(L, buf, size, f);
	f->loop = field_u64(buf, size, L->fut_loop);
	f->coro = field_u64(buf, size, L->task_coro);
	f->waiter = field_u64(buf, size, L->task_fut_waiter);
	f->name = field_u64(buf, size, L->task_name);
	f->cancels = L->task_num_cancels >= 0 ?
		     field_i32(buf, size, L->task_num_cancels) : -1;
	f->links.callback0 = field_u64(buf, size, L->fut_callback0);
	f->links.callbacks = field_u64(buf, size, L->fut_callbacks);
	f->links.awaited_by = field_u64(buf, size, L->fut_awaited_by);
	return 0;
}

/* A Python Task's _num_cancels_requested (3.11+), -1 when it has none
 * or it is no small int. */
static int py_task_cancels(struct pyproc *py, uint64_t addr)
{
	uint64_t v = pyobj_lookup_or_0(py, addr, "_num_cancels_requested");
	int64_t n;

	if (!v || pyint_read_i64(py, v, &n, NULL) < 0 || n < 0 ||
	    n > INT_MAX)
		return -1;
	return (int)n;
}

static void read_py_task(struct builder *b, uint64_t addr,
			 struct task_fields *f)
{
	const struct py_layout *L = &b->py->layout;
	const char *state;
	uint64_t s, type;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];

	if (pyobj_read_type(b->py, addr, &type, NULL) == 0 &&
	    aio_is_c_future_type(&b->types, type) &&
	    (size_t)L->fut_size <= sizeof(buf) &&
	    memsrc_read(b->py->ms, addr, buf, (size_t)L->fut_size, NULL) == 0) {
		/* 3.6's Python Task derives from the C Future: the future's
		 * half is in C fields, the task's half in the instance dict. */
		c_future_state(L, buf, sizeof(buf), f);
		f->loop = field_u64(buf, sizeof(buf), L->fut_loop);
		f->links.callback0 = field_u64(buf, sizeof(buf), L->fut_callback0);
		f->links.callbacks = field_u64(buf, sizeof(buf), L->fut_callbacks);
	} else {
		s = pyobj_lookup_or_0(b->py, addr, "_state");
		if (s && pystr_get(b->py, s, &state, NULL) == 0) {
			f->pending = !strcmp(state, "PENDING");
			if (!strcmp(state, "FINISHED"))
				py_future_failure(b->py, addr, f);
		}
		f->loop = pyobj_lookup_or_0(b->py, addr, "_loop");
		f->links.callbacks = pyobj_lookup_or_0(b->py, addr, "_callbacks");
	}
	f->coro = pyobj_lookup_or_0(b->py, addr, "_coro");
	f->waiter = pyobj_lookup_or_0(b->py, addr, "_fut_waiter");
	f->name = pyobj_lookup_or_0(b->py, addr, "_name");
	if (f->waiter == b->py->types.none)
		f->waiter = 0;
	f->cancels = py_task_cancels(b->py, addr);
}

/* "Task-N" without printf: one per task adds up. */
static char *numbered_task_name(struct arena *pool, int64_t n)
{
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
	return memcpy(arena_alloc(pool, sizeof(buf) - i), buf + i,
		      sizeof(buf) - i);
}

char *tasks_task_name(struct builder *b, uint64_t name, long coro_gen)
{
	struct py_async *a = b->out;
	const char *s;
	uint64_t type;
	int64_t n;

	if (name && pyobj_read_type(b->py, name, &type, NULL) == 0) {
		if (type == b->py->types.str && pystr_get(b->py, name, &s, NULL) == 0)
			return arena_strdup(&a->pool, s);
		/* 3.12+ names tasks lazily: a counter that reads "Task-N". */
		if (type == b->py->types.int_ &&
		    pyint_read_i64(b->py, name, &n, NULL) == 0)
			return numbered_task_name(&a->pool, n);
	}
	if (coro_gen >= 0 && a->gens[coro_gen].qualname)
		return arena_strdup(&a->pool, a->gens[coro_gen].qualname);
	return arena_strdup(&a->pool, "Task");
}

/*
 * Which loop each thread is running, as asyncio itself records it (so
 * that uvloop counts too): _PyThreadStateImpl.asyncio_running_loop from
 * 3.13, before that the thread state dict's
 * __asyncio_running_event_loop__ entry (a _RunningLoopHolder up to 3.11).
 */
static void note_running_loops(struct builder *b)
{
	struct pyproc *py = b->py;
	const struct py_layout *L = &py->layout;
	size_t i;

	for (i = 0; i < b->snap->nthreads; i++) {
		const struct py_thread *t = &b->snap->threads[i];
		uint64_t loop = 0, dict, type;

		if (L->ts_asyncio_running_loop >= 0) {
			py_field_u64(py, t->tstate, L->ts_asyncio_running_loop,
				     &loop, NULL);
		} else if (py_field_u64(py, t->tstate, L->ts_dict, &dict,
					NULL) == 1 && dict &&
			   pydict_get_str(py, dict, "__asyncio_running_event_loop__",
					  &loop, NULL) == 0 && loop &&
			   pyobj_read_type(py, loop, &type, NULL) == 0 &&
			   strstr(py_type_name_cached(py, type),
				  "RunningLoopHolder")) {
			/* rl_loop follows PyObject_HEAD */
			if (memsrc_read_u64(py->ms, loop + 16, &loop, NULL) < 0)
				loop = 0;
		}
		if (loop && loop != py->types.none && t->tid)
			addrmap_put(&b->loop_tids, loop,
				    (void *)(uintptr_t)(t->tid + 1));
	}
}

/* The kernel tid of the thread running a loop: the running-loop records
 * above, else BaseEventLoop._thread_id; 0 when unknown. */
static int loop_tid(struct builder *b, uint64_t loop)
{
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
	id = pyobj_lookup_or_0(b->py, loop, "_thread_id");
	if (id && pyobj_int_i64(b->py, id, &ident, NULL) == 0)
		for (i = 0; i < b->snap->nthreads; i++)
			if (b->snap->threads[i].thread_id == (uint64_t)ident)
				tid = b->snap->threads[i].tid;
	addrmap_put(&b->loop_tids, loop, (void *)(uintptr_t)(tid + 1));
	return tid;
}


static void builder_init(struct builder *b, struct pyproc *py,
			 const struct py_snapshot *snap,
			 const struct py_stack_options *opt,
			 struct py_async *out)
{
	memset(out, 0, sizeof(*out));
	memset(b, 0, sizeof(*b));
	addrmap_init(&out->gen_index);
	addrmap_init(&out->task_index);
	arena_init(&out->pool);
	addrmap_init(&b->loop_tids);
	addrmap_init(&b->frame_gens);
	b->py = py;
	b->snap = snap;
	b->opt = opt;
	b->out = out;
	aio_types_find(&b->types, py);
	awaiters_init(&b->awaiters, &b->types);
}

static void builder_release(struct builder *b)
{
	awaiters_release(&b->awaiters);
	aio_types_release(&b->types);
	addrmap_release(&b->loop_tids);
	addrmap_release(&b->frame_gens);
	free(b->gens);
	free(b->tasks);
	free(b->jobs);
	free(b->fields);
	free(b->next);
	free(b->chain);
}

static void found_gen_at(const void *ctx, size_t i, uint64_t *addr,
			 enum py_code_kind *kind)
{
	const struct found *f = &((const struct builder *)ctx)->gens[i];

	*addr = f->addr;
	*kind = (enum py_code_kind)f->what;
}

/*
 * The fields of every task the walk found, into b->fields: first, so
 * that the lookups of their coroutines can be prefetched (read_tasks();
 * fields[] is then compacted to the pending ones, in the order of
 * out->tasks); and while the generators are read, by the thread that
 * reads them alone or before it joins the other (py_gens_read_many()):
 * they need none of them.
 */
static void read_task_fields(void *ctx)
{
	struct builder *b = ctx;
	struct task_fields *fields;
	size_t i;

	/* Not cleared: each entry is where it is used (clearing both for
	 * every task the walk found was ~1.4 % of a 10k-task dump). */
	fields = b->fields = xmallocarray(b->ntask ? b->ntask : 1,
					  sizeof(*fields));
	for (i = 0; i < b->ntask; i++) {
		/* Each task a cache miss or two: ask for later ones now. */
		if (i + PREFETCH_AHEAD < b->ntask)
			memsrc_prefetch(b->py->ms,
					b->tasks[i + PREFETCH_AHEAD].addr,
					(size_t)b->py->layout.task_size);
		memset(&fields[i], 0, sizeof(fields[i]));
		if (b->tasks[i].what != AIO_C_TASK)
			read_py_task(b, b->tasks[i].addr, &fields[i]);
		else if (read_c_task(b, b->tasks[i].addr, &fields[i], NULL) < 0)
			memset(&fields[i], 0, sizeof(fields[i]));
	}
}

/* Every generator the walk found, read; the unreadable ones (freed or
 * half-built while we looked) are skipped.  Delegates are left wrapped:
 * index_awaiting() unwraps those that are no generator read. */
static void read_generators(struct builder *b)
{
	struct py_async *out = b->out;
	size_t n = b->ngen ? b->ngen : 1, i;
	unsigned char *ok;

	addrmap_reserve(&out->gen_index, b->ngen);
	/* Not cleared: py_gen_read_raw() fills each entry (clearing 60 MB of
	 * them took ~6 ms at 100k tasks). */
	out->gens = xmallocarray_lines(n, sizeof(*out->gens));
	b->gens_alloc = n;
	ok = xmalloc(n);
	py_gens_read_many(b->py, b->ngen, found_gen_at, b, b->opt, out->gens,
			  ok, &out->helper, read_task_fields, b);
	/* Those read, moved down over the others, in the walk's order. */
	for (i = 0; i < b->ngen; i++) {
		struct py_gen *g = &out->gens[out->ngens];

		if (i + PREFETCH_AHEAD < b->ngen)
			addrmap_prefetch(&out->gen_index,
					 b->gens[i + PREFETCH_AHEAD].addr);
		if (!ok[i])
			continue;
		if (out->ngens != i)
			*g = out->gens[i];
		set_interp(b->gens[i].interp_id, &g->interp_id,
			   &g->interp_main);
		addrmap_put(&out->gen_index, b->gens[i].addr,
			    (void *)(uintptr_t)(out->ngens + 1));
		out->ngens++;
	}
	free(ok);
}

/* One pending task into out->tasks (its fields already in *f). */
static void add_task(struct builder *b, const struct found *found,
		     struct task_fields *f)
{
	uint64_t addr = found->addr;
	struct py_async *out = b->out;
	struct py_task *t = &out->tasks[out->ntasks];
	uint64_t wt;

	memset(t, 0, sizeof(*t));
	t->addr = addr;
	t->loop = f->loop;
	t->coro = f->coro;
	t->waiter = f->waiter;
	/* (a C field as it was: a negative one is not known) */
	t->cancels_requested = f->cancels >= 0 ? f->cancels : -1;
	if (t->waiter) {
		if (pyobj_read_type(b->py, t->waiter, &wt, NULL) == 0)
			t->waiter_type =
				py_short_type_name(py_type_name_cached(b->py, wt));
		awaiters_note_waiter(&b->awaiters, t->waiter, t->addr);
	}
	set_interp(found->interp_id, &t->interp_id, &t->interp_main);
	f->coro_gen = tasks_gen_at(b, t->coro, t->interp_id);
	t->name = tasks_task_name(b, f->name, f->coro_gen);
	t->tid = loop_tid(b, t->loop);
	addrmap_put(&out->task_index, t->addr,
		    (void *)(uintptr_t)(out->ntasks + 1));
	out->ntasks++;
}

/* The pending ones of the tasks the walk found (their fields read). */
static void read_tasks(struct builder *b)
{
	struct py_async *out = b->out;
	struct task_fields *fields = b->fields;
	size_t i;

	out->tasks = xmallocarray(b->ntask ? b->ntask : 1, sizeof(*out->tasks));
	addrmap_reserve(&out->task_index, b->ntask);
	for (i = 0; i < b->ntask; i++) {
		if (i + PREFETCH_AHEAD < b->ntask) {
			addrmap_prefetch(&out->gen_index,
					 fields[i + PREFETCH_AHEAD].coro);
			/* Its name, a str or (3.12+) an int. */
			memsrc_prefetch(b->py->ms,
					fields[i + PREFETCH_AHEAD].name, 32);
		}
		if (!fields[i].pending) {
			if (fields[i].exception)
				tasks_note_failure(b, &b->tasks[i], &fields[i],
						   loop_tid(b, fields[i].loop));
			continue;
		}
		fields[out->ntasks] = fields[i];   /* out->ntasks <= i */
		add_task(b, &b->tasks[i], &fields[out->ntasks]);
	}
}


static void link_awaiters(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->out->ntasks; i++) {
		struct py_task *t = &b->out->tasks[i];

		t->awaited_by = awaiters_of(&b->awaiters, t->addr, t->waiter,
					    &b->fields[i].links,
					    &b->out->pool, &t->nawaited_by);
	}
}

int py_async_take(struct pyproc *py, const struct py_snapshot *snap,
		  const struct py_stack_options *opt, struct py_async *out,
		  struct cs_err *err)
{
	return py_async_take_with(py, snap, opt, NULL, 0, out, err);
}

int py_async_take_with(struct pyproc *py, const struct py_snapshot *snap,
		       const struct py_stack_options *opt,
		       const struct py_gc_visit *also, size_t nalso,
		       struct py_async *out, struct cs_err *err)
{
	struct py_gc_visit v[PY_GC_MAX_VISITS];
	struct builder b;
	int ret;

	if (nalso >= PY_GC_MAX_VISITS)
		CS_BUG("%zu more GC visitors", nalso);
	builder_init(&b, py, snap, opt, out);
	note_running_loops(&b);
	/* Find every generator and task, then read them: generators
	 * first, so that task chains find them by address. */
	v[0].fn = visit;
	v[0].data = &b;
	if (nalso)
		memcpy(v + 1, also, nalso * sizeof(*also));
	ret = py_gc_walk_each(py, v, nalso + 1, err);
	if (ret == 0) {
		add_listed_tasks(&b);
		read_generators(&b);
		read_tasks(&b);
		tasks_finish_failures(&b);
		tasks_build_stacks(&b);     /* each task's await chain */
		tasks_read_timers(&b);      /* sleeps and timeouts */
		tasks_read_io(&b);          /* the sockets some read */
		link_awaiters(&b);    /* who awaits whom */
		py_async_find_cycles(out);
		out->copied_at_fork = out->ntasks &&
				      py_snapshot_forked_child(snap);
		/* (a pool's forked worker holds its parent's failed tasks
		 * and jobs as they were at the fork: the parent's) */
		if (out->nfailed && py_snapshot_forked_child(snap))
			out->nfailed = out->failed_more = 0;
	}
	builder_release(&b);
	return ret;
}

const struct py_task *py_async_task(const struct py_async *a, uint64_t addr)
{
	uintptr_t k = (uintptr_t)addrmap_get(&a->task_index, addr, NULL);

	return k ? &a->tasks[k - 1] : NULL;
}

const struct py_task *py_async_running_task(const struct py_async *a,
					    int tid)
{
	const struct py_task *found = NULL;
	size_t i;

	for (i = 0; tid > 0 && !a->copied_at_fork && i < a->ntasks; i++) {
		const struct py_task *t = &a->tasks[i];

		if (t->running && t->tid == tid &&
		    (!found ||
		     (t->run_at && (!found->run_at ||
				    t->run_at < found->run_at))))
			found = t;
	}
	return found;
}

void py_async_release(struct py_async *a)
{
	size_t i;

	for (i = 0; i < a->ngens; i++)
		py_gen_release(&a->gens[i]);
	free(a->gens);
	arena_release(&a->pool);
	free(a->tasks);
	for (i = 0; i < a->ncycles; i++)
		free(a->cycles[i]);
	free(a->cycles);
	free(a->cycle_len);
	addrmap_release(&a->gen_index);
	addrmap_release(&a->task_index);
	free(a->waitables);
	free(a->semlocks);
	free(a->failed);
	/* After the generators: they borrow from it. */
	pyproc_clone_free(a->helper);
	memset(a, 0, sizeof(*a));
}
