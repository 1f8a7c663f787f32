/*
 * gevent's primitives.  Its Semaphore, BoundedSemaphore (and the
 * LockType monkey-patching makes threading.Lock), Event, AsyncResult and
 * Queue are Cython classes (LockType a Python subclass of one): their state is in C fields
 * (no __dict__, no slots), behind CPython's object header and the
 * vtable pointer of a class with C methods.  No header names those
 * offsets, so they come from one row per gevent release, read off a real
 * build, and whatever is read through them is checked for its type
 * before it counts (a list, a deque, a greenlet the caller knows).
 * gevent's RLock is a Python class with slots: its owner and count are
 * read by name, its waiters off its inner Semaphore.
 *
 * A greenlet waiting on Event.wait(), AsyncResult.get() or
 * Semaphore.acquire() leaves its switch (a builtin method whose self is
 * the greenlet) in the object's list of callbacks (_links); one waiting
 * on Queue.get() or put() leaves a Waiter (whose greenlet field is it)
 * in the queue's getters or putters.  No Python frame shows either wait:
 * the Cython call leaves none.  A JoinableQueue's join() waits on an
 * Event of its own (_cond), whose waiters count as the queue's.
 */
#include "readers/primitives.h"
#include "readers/primitives_internal.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/tasks.h"
#include "common/util.h"
#include "common/banned.h"

struct gevent_layout {
	const char *release;   /* a prefix of gevent.__version__ */
	int links;             /* AbstractLinkable._links: list */
	int flag;              /* Event._flag: C int */
	int counter;           /* Semaphore.counter: C int */
	int items;             /* Queue.queue: deque */
	int getters, putters;  /* Queue: deques of Waiters */
	int maxsize;           /* Queue._maxsize: Py_ssize_t, < 0 unbounded */
	int waiter_greenlet;   /* Waiter.greenlet */
	int greenlet_links;    /* Greenlet._links: list (join()'s waiters) */
	int jq_cond;           /* JoinableQueue._cond: the Event join()
				  waits on */
	int jq_unfinished;     /* JoinableQueue.unfinished_tasks:
				  Py_ssize_t */
	int ar_value;          /* AsyncResult._value: gevent's _NONE
				  object until set */
	int ar_exc_info;       /* AsyncResult._exc_info: a tuple, empty
				  until set_exception() */
	int ch_getters;        /* Channel.getters: deque of Waiters */
	int ch_putters;        /* Channel.putters: deque of (item, Waiter) */
};

/* Verified on Debian's gevent 22.10.2 (Cython 0.29) under Python 3.11:
 * each object's words against what the interpreter says of it
 * (gc.get_referents(), the attributes Cython exposes); the Greenlet's
 * _links as shared/reference/greenlet-trio-with.md gives it, checked
 * the same way. */
static const struct gevent_layout layouts[] = {
	{ "22.10.", 48, 64, 64, 40, 48, 56, 72, 32, 96, 80, 88, 64, 72, 32,
	  40 },
};

/* Waiters read per object at most (a list of callbacks, a deque). */
#define GEVENT_MAX_LINKS 4096
/* Py_TPFLAGS_HEAPTYPE: a class made at run time (gevent in pure
 * Python, GEVENT_PURE_PYTHON), whose objects the rows do not fit. */
#define HEAPTYPE_FLAG (1ul << 9)

const struct gevent_layout *py_prim_gevent_row(size_t i)
{
	return i < sizeof(layouts) / sizeof(layouts[0]) ? &layouts[i] : NULL;
}

/* One of t's classes of gevent's that is compiled (a static type: its
 * Semaphore, Event, Queue...; its RLock and LockType are Python classes
 * in every build), or 0: none is (gevent in pure Python). */
static uint64_t compiled_class(struct pyproc *py,
			       const struct py_prim_types *t)
{
	uint64_t flags;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->family[i] == PY_PRIM_GEVENT &&
		    py_field_u64(py, t->type[i], py->layout.tp_flags, &flags,
				 NULL) > 0 && !(flags & HEAPTYPE_FLAG))
			return t->type[i];
	return 0;
}

const struct gevent_layout *prim_gevent_layout(struct pyproc *py,
					       const struct py_prim_types *t)
{
	struct cs_err err;
	const char *vs;
	uint64_t ver;
	size_t i;

	/* The rows assume the GIL build's 16-byte object header, and
	 * gevent's compiled classes, no Python ones. */
	if (py->layout.free_threaded || py->layout.ob_type != 8 ||
	    py->layout.tp_flags < 0 || !compiled_class(py, t))
		return NULL;
	cs_err_init(&err);
	ver = py_module_attr(py, "gevent", "__version__");
	if (!ver || pystr_get(py, ver, &vs, &err) < 0)
		return NULL;
	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (!strncmp(vs, layouts[i].release, strlen(layouts[i].release)))
			return &layouts[i];
	return NULL;
}

/* The object at obj + off when it is exactly of type `type` (a list);
 * else 0. */
static uint64_t field_of_type(struct pyproc *py, uint64_t obj, int off,
			      uint64_t type)
{
	struct cs_err err;
	uint64_t v = 0, t = 0;

	cs_err_init(&err);
	if (!type || py_field_u64(py, obj, off, &v, &err) <= 0 || !v ||
	    pyobj_read_type(py, v, &t, &err) < 0 || t != type)
		return 0;
	return v;
}

/* The object whose bound switch m is, else 0: a builtin method named
 * "switch" (a greenlet's), or a method whose function is a Cython
 * function named "switch" (a MultipleWaiter's, which joinall() and
 * iwait() link).  A callback rawlink() added is no waiter. */
static uint64_t switch_self(struct pyproc *py, uint64_t m)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, fn = m, self;
	const char *tn;
	char name[8];
	int off;

	if (pyobj_read_type(py, m, &type, NULL) < 0)
		return 0;
	tn = py_type_name_cached(py, type);
	if (!strcmp(tn, "builtin_function_or_method")) {
		off = L->cfunction_self;
	} else if (!strcmp(tn, "method") && L->method_self >= 8) {
		off = L->method_self;
		if (py_field_u64(py, m, off - 8, &fn, NULL) <= 0 ||
		    pyobj_read_type(py, fn, &type, NULL) < 0 ||
		    strcmp(py_short_type_name(py_type_name_cached(py, type)),
			   "cython_function_or_method"))
			return 0;
	} else {
		return 0;
	}
	if (off < 0 || py_cfunction_name(py, fn, name, sizeof(name), NULL) < 0 ||
	    strcmp(name, "switch") ||
	    py_field_u64(py, m, off, &self, NULL) <= 0)
		return 0;
	return self;
}

static int is_waiter(struct pyproc *py, const struct py_prim_types *t,
		     uint64_t obj)
{
	uint64_t type;

	return t->gevent_waiter && pyobj_read_type(py, obj, &type, NULL) == 0 &&
	       (type == t->gevent_waiter ||
		pytype_is_subtype(py, type, t->gevent_waiter));
}

/* The greenlet a link waits in, into *w: the self of a greenlet's bound
 * switch, or the greenlet of a Waiter whose switch it is (gevent.wait(),
 * iwait() and joinall() wait through a MultipleWaiter); 0 if none. */
static uint64_t link_greenlet(struct pyproc *py,
			      const struct py_prim_types *t, uint64_t link,
			      struct py_gevent_waiter *w)
{
	uint64_t self = switch_self(py, link), g = 0, type;

	w->greenlet = 0;
	w->maybe_first_of = 0;
	if (!self || !is_waiter(py, t, self))
		return w->greenlet = self;
	if (py_field_u64(py, self, t->gevent->waiter_greenlet, &g, NULL) <= 0 ||
	    g == py->types.none)
		return 0;
	w->maybe_first_of = t->gevent_multiwaiter &&
		pyobj_read_type(py, self, &type, NULL) == 0 &&
		(type == t->gevent_multiwaiter ||
		 pytype_is_subtype(py, type, t->gevent_multiwaiter));
	return w->greenlet = g;
}

/* The greenlets waiting in the list of callbacks at obj + off (an
 * AbstractLinkable's or a Greenlet's _links), up to max into out (max
 * 0: only counted); how many went to out, and into *count how many
 * there are in all (-1 unknown: unreadable, or more than
 * GEVENT_MAX_LINKS). */
static size_t link_waiters(struct pyproc *py, const struct py_prim_types *t,
			   uint64_t obj, int off, struct py_gevent_waiter *out,
			   size_t max, int64_t *count)
{
	uint64_t list = field_of_type(py, obj, off, py->types.list);
	uint64_t *items = NULL;
	size_t size = 0, k, n = 0;
	int64_t all = 0;

	*count = -1;
	if (!list)
		return 0;
	items = xmallocarray(GEVENT_MAX_LINKS, sizeof(*items));
	if (pyseq_items(py, list, items, GEVENT_MAX_LINKS, &size, NULL) == 0 &&
	    size <= GEVENT_MAX_LINKS) {
		for (k = 0; k < size; k++) {
			struct py_gevent_waiter w;

			if (!link_greenlet(py, t, items[k], &w))
				continue;
			all++;
			if (n < max)
				out[n++] = w;
		}
		*count = all;
	}
	free(items);
	return n;
}

static int64_t c_int(struct pyproc *py, uint64_t obj, int off)
{
	struct cs_err err;
	int32_t v;

	cs_err_init(&err);
	return py_field_i32(py, obj, off, &v, &err) > 0 ? v : -1;
}

/* gevent's class of that kind and name among t's, or 0. */
static uint64_t gevent_class(const struct py_prim_types *t,
			     enum py_prim_kind kind, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->family[i] == PY_PRIM_GEVENT && t->kind[i] == kind &&
		    !strcmp(t->name[i], name))
			return t->type[i];
	return 0;
}

/* A Queue's items at off, a deque (a list for PriorityQueue's heap and
 * LifoQueue's stack): how many, or -1. */
static int64_t items_len(struct pyproc *py, const struct py_prim_types *t,
			 uint64_t obj, int off)
{
	uint64_t v = 0;

	if (py_field_u64(py, obj, off, &v, NULL) <= 0 || !v)
		return -1;
	return prim_len(py, t, v);
}

/* A Queue's deque at off: its length, 0 for None (an UnboundQueue's
 * putters, never used), or -1. */
static int64_t deque_len(struct pyproc *py, const struct py_prim_types *t,
			 uint64_t obj, int off)
{
	uint64_t v = 0, type = 0;

	if (py_field_u64(py, obj, off, &v, NULL) <= 0 || !v)
		return -1;
	if (v == py->types.none)
		return 0;
	return t->deque && pyobj_read_type(py, v, &type, NULL) == 0 &&
	       type == t->deque ? prim_len(py, t, v) : -1;
}

/* An RLock's inner Semaphore, when it is one of gevent's; else 0. */
static uint64_t rlock_block(struct pyproc *py, const struct py_prim_types *t,
			    uint64_t rlock)
{
	uint64_t block = prim_attr(py, rlock, "_block"), type = 0;
	size_t i;

	if (!block || pyobj_read_type(py, block, &type, NULL) < 0)
		return 0;
	for (i = 0; i < t->n; i++)
		if (t->family[i] == PY_PRIM_GEVENT &&
		    t->kind[i] == PY_PRIM_SEMAPHORE && t->type[i] == type)
			return block;
	return 0;
}

static void read_rlock(struct pyproc *py, const struct py_prim_types *t,
		       struct py_prim *p)
{
	uint64_t owner = prim_attr(py, p->addr, "_owner");
	uint64_t block = rlock_block(py, t, p->addr);

	p->owner_greenlet = owner && owner != py->types.none ? owner : 0;
	p->locked = owner ? p->owner_greenlet != 0 : -1;
	p->count = prim_int_attr(py, p->addr, "_count");
	p->inner = block;
	if (t->gevent && block)
		(void)link_waiters(py, t, block, t->gevent->links, NULL, 0,
				   &p->waiters);
}

/* Is an AsyncResult ready (ready(): a value or an exception set)?
 * 1, 0, or -1 unknown.  Unset, its value is gevent's _NONE, an object
 * of a class of that name, and its exc_info the empty tuple. */
static int result_ready(struct pyproc *py, const struct py_prim_types *t,
			uint64_t obj)
{
	const struct gevent_layout *G = t->gevent;
	uint64_t value = 0, exc = 0, type;
	int64_t n;

	if (py_field_u64(py, obj, G->ar_value, &value, NULL) <= 0 || !value ||
	    py_field_u64(py, obj, G->ar_exc_info, &exc, NULL) <= 0 || !exc ||
	    pyobj_read_type(py, value, &type, NULL) < 0)
		return -1;
	if (strcmp(py_short_type_name(py_type_name_cached(py, type)),
		   "_NONE"))
		return 1;
	n = prim_len(py, t, exc);
	return n < 0 ? -1 : n > 0;
}

/* Is p gevent's Channel (no Queue: its own fields, no items kept)? */
static int is_channel(struct pyproc *py, const struct py_prim_types *t,
		      const struct py_prim *p)
{
	return t->gevent_channel && (p->type == t->gevent_channel ||
				     pytype_is_subtype(py, p->type,
						       t->gevent_channel));
}

/* A JoinableQueue's unfinished tasks, and the greenlets in its join()
 * (its _cond Event's, which is then p->inner) among its waiters. */
static void read_joinable(struct pyproc *py, const struct py_prim_types *t,
			  struct py_prim *p)
{
	const struct gevent_layout *G = t->gevent;
	uint64_t type, v;
	int64_t joiners;

	if (!t->gevent_joinable ||
	    pyobj_read_type(py, p->addr, &type, NULL) < 0 ||
	    (type != t->gevent_joinable &&
	     !pytype_is_subtype(py, type, t->gevent_joinable)))
		return;
	if (py_field_u64(py, p->addr, G->jq_unfinished, &v, NULL) > 0 &&
	    (int64_t)v >= 0)
		p->unfinished = (int64_t)v;
	p->inner = field_of_type(py, p->addr, G->jq_cond,
				 gevent_class(t, PY_PRIM_EVENT,
					      "gevent.event.Event"));
	if (!p->inner)
		return;
	(void)link_waiters(py, t, p->inner, G->links, NULL, 0, &joiners);
	p->waiters = prim_plus_joiners(p->waiters, joiners);
}

void prim_read_gevent_state(struct pyproc *py, const struct py_prim_types *t,
			    struct py_prim *p)
{
	const struct gevent_layout *G = t->gevent;
	uint64_t maxsize;
	int64_t v;

	if (p->kind == PY_PRIM_RLOCK) {
		read_rlock(py, t, p);
		return;
	}
	if (!G)
		return;
	switch (p->kind) {
	case PY_PRIM_LOCK:  /* gevent.thread.LockType: a BoundedSemaphore(1) */
		v = c_int(py, p->addr, G->counter);
		p->locked = v < 0 || v > 1 ? -1 : v == 0;
		(void)link_waiters(py, t, p->addr, G->links, NULL, 0,
				   &p->waiters);
		break;
	case PY_PRIM_SEMAPHORE:
	case PY_PRIM_BOUNDED_SEMAPHORE:
		p->value = c_int(py, p->addr, G->counter);
		(void)link_waiters(py, t, p->addr, G->links, NULL, 0,
				   &p->waiters);
		break;
	case PY_PRIM_EVENT:
		if (p->name && !strcmp(p->name, "gevent.event.Event")) {
			v = c_int(py, p->addr, G->flag);
			p->set = v == 0 || v == 1 ? (int)v : -1;
		} else {
			p->set = result_ready(py, t, p->addr);
		}
		(void)link_waiters(py, t, p->addr, G->links, NULL, 0,
				   &p->waiters);
		break;
	case PY_PRIM_QUEUE:
		if (is_channel(py, t, p)) {  /* its offers wait as putters */
			p->waiters = prim_sum(
				deque_len(py, t, p->addr, G->ch_getters),
				deque_len(py, t, p->addr, G->ch_putters));
			break;
		}
		p->qsize = items_len(py, t, p->addr, G->items);
		p->waiters = prim_sum(deque_len(py, t, p->addr, G->getters),
				      deque_len(py, t, p->addr, G->putters));
		if (py_field_u64(py, p->addr, G->maxsize, &maxsize, NULL) > 0)
			p->maxsize = (int64_t)maxsize > 0 ? (int64_t)maxsize : 0;
		read_joinable(py, t, p);
		break;
	default:
		break;
	}
}

/* The greenlet of each Waiter in a Queue's deque at off (0 for an item
 * of another type): a get() or put() of its own, no first-of.  With
 * pairs, each item is a tuple (item, Waiter): a Channel's putters. */
static size_t queue_waiters(struct pyproc *py, const struct py_prim_types *t,
			    uint64_t obj, int off, int pairs,
			    struct py_gevent_waiter *out, size_t max)
{
	uint64_t *items, pair[2];
	size_t n, k, size;

	if (!max)
		return 0;
	if (max > GEVENT_MAX_LINKS)
		max = GEVENT_MAX_LINKS;
	items = xmallocarray(max, sizeof(*items));
	n = prim_deque_items(py, t, field_of_type(py, obj, off, t->deque),
			     items, max);
	for (k = 0; k < n; k++) {
		out[k].maybe_first_of = 0;
		if (pairs)
			items[k] = pyseq_items(py, items[k], pair, 2, &size,
					       NULL) == 0 && size == 2 ?
				   pair[1] : 0;
		if (!items[k] || !is_waiter(py, t, items[k]) ||
		    py_field_u64(py, items[k], t->gevent->waiter_greenlet,
				 &out[k].greenlet, NULL) <= 0)
			out[k].greenlet = 0;
	}
	free(items);
	return n;
}

size_t py_prim_waiter_greenlets(struct pyproc *py,
				const struct py_prim_types *t,
				const struct py_prim *p,
				struct py_gevent_waiter *out, size_t max)
{
	const struct gevent_layout *G = t->gevent;
	uint64_t obj = p->addr;
	size_t n;
	int64_t count;

	if (p->family != PY_PRIM_GEVENT || !G || !max)
		return 0;
	if (max > GEVENT_MAX_LINKS)
		max = GEVENT_MAX_LINKS;
	if (p->kind == PY_PRIM_QUEUE && is_channel(py, t, p)) {
		n = queue_waiters(py, t, obj, G->ch_getters, 0, out, max);
		return n + queue_waiters(py, t, obj, G->ch_putters, 1,
					 out + n, max - n);
	}
	if (p->kind == PY_PRIM_QUEUE) {
		n = queue_waiters(py, t, obj, G->getters, 0, out, max);
		n += queue_waiters(py, t, obj, G->putters, 0, out + n,
				   max - n);
		if (p->inner && n < max)  /* a JoinableQueue's join()ers */
			n += link_waiters(py, t, p->inner, G->links, out + n,
					  max - n, &count);
		return n;
	}
	if (p->kind == PY_PRIM_RLOCK)
		obj = p->inner;
	return obj ? link_waiters(py, t, obj, G->links, out, max, &count) : 0;
}

size_t py_gevent_joiners(struct pyproc *py, const struct py_prim_types *t,
			 uint64_t greenlet, struct py_gevent_waiter *out,
			 size_t max)
{
	uint64_t type;
	int64_t count;

	if (!t->gevent || !t->gevent_greenlet || !max ||
	    pyobj_read_type(py, greenlet, &type, NULL) < 0 ||
	    (type != t->gevent_greenlet &&
	     !pytype_is_subtype(py, type, t->gevent_greenlet)))
		return 0;
	if (max > GEVENT_MAX_LINKS)
		max = GEVENT_MAX_LINKS;
	return link_waiters(py, t, greenlet, t->gevent->greenlet_links, out,
			    max, &count);
}
