#include "readers/awaiters.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "readers/tasks.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Callbacks looked at per future, and items per closure or partial. */
#define MAX_CALLBACKS 4096
#define MAX_CLOSURE 64
/* Getters read from an as_completed queue. */
#define MAX_GETTERS 16
/* collections.deque: blocks of 64 items, linked left to right.  From
 * ob_size on, every version has leftblock, rightblock and leftindex; a
 * block is a left link, its 64 items and a right link. */
#define DEQUE_BLOCKLEN 64
#define DEQUE_LEFTBLOCK 8      /* after ob_size */
#define DEQUE_LEFTINDEX 24
/* Entries read from a 3.14 fut_awaited_by set. */
#define MAX_AWAITED_BY 256
/* Futures whose own callbacks are followed, per task (awaiters_of()). */
#define MAX_VIA_FOLLOWED 16

/* Lists longer than this also keep a set, so that adding stays O(1):
 * ten thousand tasks awaiting one future must not cost 10^8 compares. */
#define ADDR_LIST_SCAN 16

/* Addresses in the order added, each once. */
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

void awaiters_init(struct awaiters *aw, struct aio_types *types)
{
	aw->types = types;
	addrmap_init(&aw->waiters);
}

void awaiters_release(struct awaiters *aw)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (addrmap_next(&aw->waiters, &pos, &key, &val)) {
		struct addr_list *l = val;

		addr_list_release(l);
		free(l);
	}
	addrmap_release(&aw->waiters);
}

void awaiters_note_waiter(struct awaiters *aw, uint64_t future,
			  uint64_t task)
{
	struct addr_list *l = addrmap_get(&aw->waiters, future, NULL);

	if (!l) {
		l = xcalloc(1, sizeof(*l));
		addrmap_put(&aw->waiters, future, l);
	}
	addr_list_add(l, task);
}

/* Add to out the tasks whose _fut_waiter is future. */
static void add_waiters_of(struct awaiters *aw, uint64_t future,
			   struct addr_list *out)
{
	struct addr_list *l = addrmap_get(&aw->waiters, future, NULL);
	size_t i;

	for (i = 0; l && i < l->n; i++)
		addr_list_add(out, l->v[i]);
}

/* The items of a callbacks list: each a (callback, context) tuple from
 * 3.7, a bare callback in 3.6. */
static void callbacks_of(struct awaiters *aw, const struct task_links *l,
			 struct addr_list *out)
{
	struct pyproc *py = aw->types->py;
	uint64_t *items, first, type;
	size_t n = 0, i, one;

	if (l->callback0)
		addr_list_add(out, l->callback0);
	if (!l->callbacks || l->callbacks == py->types.none)
		return;
	if (pyseq_items(py, l->callbacks, NULL, 0, &n, NULL) < 0 || !n)
		return;
	if (n > MAX_CALLBACKS)
		n = MAX_CALLBACKS;
	items = xmalloc(n * sizeof(*items));
	if (pyseq_items(py, l->callbacks, items, n, &n, NULL) == 0) {
		for (i = 0; i < n && i < MAX_CALLBACKS; i++) {
			if (pyobj_read_type(py, items[i], &type, NULL) == 0 &&
			    type == py->types.tuple &&
			    pyseq_items(py, items[i], &first, 1, &one, NULL) == 0 &&
			    one >= 1)
				addr_list_add(out, first);
			else
				addr_list_add(out, items[i]);
		}
	}
	free(items);
}

/*
 * Who completes when `child` completes, seen from its callbacks: the
 * tasks that are then woken (direct), and the futures and tasks whose
 * own waiters are then woken (via).
 */
struct targets {
	struct awaiters *aw;
	uint64_t child;
	struct addr_list direct, via;
};

static void add_via(struct targets *t, uint64_t fut)
{
	if (fut && fut != t->child &&
	    aio_is_future(aio_classify_obj(t->aw->types, fut)))
		addr_list_add(&t->via, fut);
}

/* The first items of the deque at dq, at most max; returns how many. */
static size_t deque_items(struct pyproc *py, uint64_t dq, uint64_t *out,
			  size_t max)
{
	const int size_off = py->layout.ob_size;
	uint64_t size, block, index;
	size_t n = 0, hops;

	if (size_off < 0 ||
	    py_field_u64(py, dq, size_off, &size, NULL) != 1 ||
	    py_field_u64(py, dq, size_off + DEQUE_LEFTBLOCK, &block, NULL) != 1 ||
	    py_field_u64(py, dq, size_off + DEQUE_LEFTINDEX, &index, NULL) != 1 ||
	    index >= DEQUE_BLOCKLEN)
		return 0;
	for (hops = 0; block && n < max && n < size && hops < max; hops++) {
		for (; index < DEQUE_BLOCKLEN && n < max && n < size; index++)
			if (py_read_words(py, block + 8 + 8 * index, &out[n], 1,
					  NULL) < 0)
				return n;
			else
				n++;
		if (py_read_words(py, block + 8 + 8 * DEQUE_BLOCKLEN, &block, 1,
				  NULL) < 0)
			return n;
		index = 0;
	}
	return n;
}

/* as_completed puts each finished child in a queue that the iterating
 * task is getting from: the futures of the queue's getters. */
static void queue_getters(struct targets *t, uint64_t queue)
{
	struct pyproc *py = t->aw->types->py;
	uint64_t getters = pyobj_lookup_or_0(py, queue, "_getters");
	uint64_t items[MAX_GETTERS];
	size_t n, i;

	if (!getters)
		return;
	n = deque_items(py, getters, items, MAX_GETTERS);
	for (i = 0; i < n; i++)
		add_via(t, items[i]);
}

/* A task's wakeup: the task is the callable's self at offset off. */
static void wakeup_target(struct targets *t, uint64_t cb, int off)
{
	uint64_t self;

	py_field_u64(t->aw->types->py, cb, off, &self, NULL);
	if (aio_is_task(aio_classify_obj(t->aw->types, self)))
		addr_list_add(&t->direct, self);
}

/* A bound method: a TaskGroup's _on_task_done wakes its parent task,
 * a future's method (shield's, wait_for's) completes that future. */
static void method_targets(struct targets *t, uint64_t cb)
{
	struct pyproc *py = t->aw->types->py;
	uint64_t self, parent, type;
	enum aio_class c;

	py_field_u64(py, cb, py->layout.method_self, &self, NULL);
	c = aio_classify_obj(t->aw->types, self);
	if (c == AIO_TASKGROUP) {
		parent = pyobj_lookup_or_0(py, self, "_parent_task");
		if (aio_is_task(aio_classify_obj(t->aw->types, parent)))
			addr_list_add(&t->direct, parent);
	} else if (aio_is_future(c)) {
		add_via(t, self);
	} else if (c == AIO_NONE &&
		   pyobj_read_type(py, self, &type, NULL) == 0 &&
		   !strcmp(py_short_type_name(py_type_name_cached(py, type)),
			   "_AsCompletedIterator")) {
		/* 3.13+: the bound _handle_completion of as_completed's
		 * iterator, whose _done is the queue. */
		queue_getters(t, pyobj_lookup_or_0(py, self, "_done"));
	}
}

/* gather's _done_callback, shield's and wait's closures: the futures in
 * the closure's cells. */
static void closure_targets(struct targets *t, uint64_t cb)
{
	struct pyproc *py = t->aw->types->py;
	uint64_t tuple, items[MAX_CLOSURE], v;
	const struct py_code *code = py_function_code(py, cb);
	/* (Before 3.11 the code has no qualname: asyncio.wait's
	 * _on_completion matches too, and has no queue.) */
	static const char tasks_py[] = "/asyncio/tasks.py";
	size_t flen = code && code->filename ? strlen(code->filename) : 0;
	int as_completed = code && code->name &&
			   !strcmp(code->name, "_on_completion") &&
			   flen >= sizeof(tasks_py) - 1 &&
			   !strcmp(code->filename + flen - (sizeof(tasks_py) - 1),
				   tasks_py);
	size_t n = 0, i;

	py_field_u64(py, cb, py->layout.func_closure, &tuple, NULL);
	if (!tuple || tuple == py->types.none ||
	    pyseq_items(py, tuple, items, MAX_CLOSURE, &n, NULL) < 0)
		return;
	if (n > MAX_CLOSURE)
		n = MAX_CLOSURE;
	for (i = 0; i < n; i++)
		if (py_field_u64(py, items[i], py->layout.cell_ref, &v, NULL) == 1) {
			/* A task in the closure is no future the waiter
			 * awaits: 3.14's wait() and shield() keep the
			 * current task there (for its awaited_by), whose
			 * own awaiters await it, not the child. */
			if (!aio_is_task(aio_classify_obj(t->aw->types, v)))
				add_via(t, v);
			/* as_completed's _on_completion (3.6 - 3.12): its
			 * cell `done` is the queue. */
			if (as_completed && v)
				queue_getters(t, v);
		}
}

static void callback_targets(struct targets *t, uint64_t cb, int depth);


/* wait_for before 3.12: partial(_release_waiter, waiter); 3.6 gather:
 * partial(_done_callback, i), a closure. */
static void partial_targets(struct targets *t, uint64_t cb, int depth)
{
	struct pyproc *py = t->aw->types->py;
	const struct py_layout *L = &py->layout;
	uint64_t fn, tuple, items[MAX_CLOSURE];
	size_t n = 0, i;

	if (depth < 2 && py_field_u64(py, cb, L->partial_fn, &fn, NULL) == 1 &&
	    fn)
		callback_targets(t, fn, depth + 1);
	py_field_u64(py, cb, L->partial_args, &tuple, NULL);
	if (!tuple || pyseq_items(py, tuple, items, MAX_CLOSURE, &n, NULL) < 0)
		return;
	if (n > MAX_CLOSURE)
		n = MAX_CLOSURE;
	for (i = 0; i < n; i++)
		add_via(t, items[i]);
}

/* Decode one callback by its type (see the header for the kinds). */
static void callback_targets(struct targets *t, uint64_t cb, int depth)
{
	struct pyproc *py = t->aw->types->py;
	const struct py_layout *L = &py->layout;
	const char *name;
	uint64_t type;

	if (pyobj_read_type(py, cb, &type, NULL) < 0)
		return;
	name = py_type_name_cached(py, type);
	if (!strcmp(name, "builtin_function_or_method") && L->cfunction_self >= 0)
		wakeup_target(t, cb, L->cfunction_self);  /* 3.10+ task_wakeup */
	else if (!strcmp(py_short_type_name(name), "TaskWakeupMethWrapper") &&
		 L->taskwakeup_task >= 0)
		wakeup_target(t, cb, L->taskwakeup_task);
	else if (!strcmp(name, "method"))
		method_targets(t, cb);
	else if (!strcmp(name, "function") && L->func_closure >= 0)
		closure_targets(t, cb);
	else if (!strcmp(name, "functools.partial") && L->partial_args >= 0)
		partial_targets(t, cb, depth);
}

/* A future's own callbacks, as a task's are read (readers/tasks.c): a C
 * Future's (a Python subclass's too, gather's) fields, else the Python
 * Future's _callbacks. */
static void future_links(struct awaiters *aw, uint64_t fut,
			 struct task_links *l)
{
	struct pyproc *py = aw->types->py;
	uint64_t type;

	memset(l, 0, sizeof(*l));
	if (pyobj_read_type(py, fut, &type, NULL) < 0)
		return;
	if (aio_is_c_future_type(aw->types, type)) {
		py_field_u64(py, fut, py->layout.fut_callback0, &l->callback0,
			     NULL);
		py_field_u64(py, fut, py->layout.fut_callbacks, &l->callbacks,
			     NULL);
	} else {
		l->callbacks = pyobj_lookup_or_0(py, fut, "_callbacks");
	}
}

/*
 * A future the child completes that no task awaits itself, but a
 * callback of its own completes another: wait_for() up to 3.11 awaits
 * a waiter future that its partial(_release_waiter, waiter), on the
 * future it waits for, completes.  Around gather() or shield() that
 * future is the gather's or shield's, one step from the child: follow
 * its callbacks too (one level, at most MAX_VIA_FOLLOWED futures).
 * Before, wait_for(gather(a, b)) left a and b roots of their own.  Not
 * a task's: it ends when its own coroutine does, not when the child
 * does (a callback partial(cb, other_task) would make other_task's
 * parent the child's).  From 3.12 wait_for() awaits the future itself:
 * it has its waiter, and is not followed.
 */
static void follow_via(struct targets *t)
{
	size_t j, k, n = t->via.n;

	for (j = 0; j < n && j < MAX_VIA_FOLLOWED; j++) {
		struct addr_list *l = addrmap_get(&t->aw->waiters, t->via.v[j],
						  NULL);
		struct addr_list more = { 0 };
		struct task_links fl;

		if ((l && l->n) ||
		    aio_is_task(aio_classify_obj(t->aw->types, t->via.v[j])))
			continue;
		future_links(t->aw, t->via.v[j], &fl);
		callbacks_of(t->aw, &fl, &more);
		for (k = 0; k < more.n; k++)
			callback_targets(t, more.v[k], 0);
		addr_list_release(&more);
	}
}

/* 3.14 records awaiters itself: a task, or a set of tasks. */
static void recorded_awaiters(struct awaiters *aw, uint64_t awaited_by,
			      struct addr_list *direct)
{
	struct pyproc *py = aw->types->py;
	struct pydict_entry e[MAX_AWAITED_BY];
	size_t used, i;
	uint64_t type;

	if (!awaited_by || pyobj_read_type(py, awaited_by, &type, NULL) < 0)
		return;
	if (aio_is_task(aio_classify(aw->types, type))) {
		addr_list_add(direct, awaited_by);
		return;
	}
	if ((type == py->types.set || type == py->types.frozenset) &&
	    pyset_entries(py, awaited_by, e, MAX_AWAITED_BY, &used, NULL) == 0)
		for (i = 0; i < used && i < MAX_AWAITED_BY; i++)
			if (aio_is_task(aio_classify_obj(aw->types, e[i].key)))
				addr_list_add(direct, e[i].key);
}

uint64_t *awaiters_of(struct awaiters *aw, uint64_t task, uint64_t waiter,
		      const struct task_links *l, struct arena *pool,
		      size_t *n)
{
	struct targets t;
	struct addr_list cbs = { 0 };
	uint64_t *out;
	size_t j;

	memset(&t, 0, sizeof(t));
	t.aw = aw;
	t.child = task;
	add_waiters_of(aw, task, &t.direct);
	recorded_awaiters(aw, l->awaited_by, &t.direct);
	callbacks_of(aw, l, &cbs);
	for (j = 0; j < cbs.n; j++)
		callback_targets(&t, cbs.v[j], 0);
	follow_via(&t);
	for (j = 0; j < t.via.n; j++)
		add_waiters_of(aw, t.via.v[j], &t.direct);
	out = arena_allocarray(pool, t.direct.n, sizeof(*out));
	*n = 0;
	for (j = 0; j < t.direct.n; j++)
		if (t.direct.v[j] != task || waiter == task)
			out[(*n)++] = t.direct.v[j];
	addr_list_release(&cbs);
	addr_list_release(&t.direct);
	addr_list_release(&t.via);
	return out;
}
