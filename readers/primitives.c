#include "readers/primitives.h"
#include "readers/primitives_internal.h"

#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Children of a gather whose state is read. */
#define MAX_GATHER_CHILDREN 4096

/* Which of t's classes obj is an instance of: its index, or -1. */
static long prim_class(struct pyproc *py, const struct py_prim_types *t,
		       uint64_t obj, uint64_t *type)
{
	struct cs_err err;
	uintptr_t v;
	size_t i;

	cs_err_init(&err);
	if (!obj || pyobj_read_type(py, obj, type, &err) < 0 || !*type)
		return -1;
	v = t->verdicts ? (uintptr_t)addrmap_get(t->verdicts, *type, NULL) : 0;
	if (v)
		return (long)v - 2;
	for (i = 0; i < t->n; i++)
		if (*type == t->type[i] ||
		    pytype_is_subtype(py, *type, t->type[i]))
			break;
	if (t->verdicts)
		addrmap_put(t->verdicts, *type,
			    (void *)(uintptr_t)(i < t->n ? i + 2 : 1));
	return i < t->n ? (long)i : -1;
}

/* An instance attribute, from its __dict__ or its slot (trio's attrs
 * classes have slots); 0 where absent, unset or unreadable. */
uint64_t prim_attr(struct pyproc *py, uint64_t obj, const char *name)
{
	return pyobj_own_or_0(py, obj, name);
}

uint64_t prim_attr2(struct pyproc *py, uint64_t obj, const char *a,
		    const char *b)
{
	return prim_attr(py, prim_attr(py, obj, a), b);
}

int prim_bool(struct pyproc *py, uint64_t v)
{
	if (v && v == py->types.true_)
		return 1;
	if (v && v == py->types.false_)
		return 0;
	return -1;
}

int64_t prim_int(struct pyproc *py, uint64_t v)
{
	struct cs_err err;
	int64_t n;

	cs_err_init(&err);
	/* (1: too big for int64, *n not set) */
	if (!v || pyobj_int_i64(py, v, &n, &err) != 0)
		return -1;
	return n;
}

/* len() of a list, tuple or deque (in ob_size), a set or a dict (an
 * OrderedDict: trio's ParkingLot); None is empty; anything else -1 (a
 * str's length is no count of waiters). */
int64_t prim_len(struct pyproc *py, const struct py_prim_types *t, uint64_t v)
{
	const struct py_layout *L = &py->layout;
	const struct py_types *T = &py->types;
	struct cs_err err;
	uint64_t n, type;
	int off = -1;

	if (v && v == T->none)
		return 0;
	cs_err_init(&err);
	if (!v || pyobj_read_type(py, v, &type, &err) < 0)
		return -1;
	if (type == T->list || type == T->tuple ||
	    (t->deque && (type == t->deque ||
			  pytype_is_subtype(py, type, t->deque))))
		off = L->ob_size;
	else if (type == T->set || type == T->frozenset ||
		 pytype_is_subtype(py, type, T->set))
		off = L->set_used;
	else if (type == T->dict || pytype_is_subtype(py, type, T->dict))
		off = L->dict_used;
	if (off < 0 || py_field_u64(py, v, off, &n, &err) <= 0 ||
	    n > (1ull << 40))
		return -1;
	return (int64_t)n;
}

int64_t prim_len_attr(struct pyproc *py, const struct py_prim_types *t,
		      uint64_t obj, const char *name)
{
	return prim_len(py, t, prim_attr(py, obj, name));
}

int64_t prim_int_attr(struct pyproc *py, uint64_t obj, const char *name)
{
	return prim_int(py, prim_attr(py, obj, name));
}

int64_t prim_plus_joiners(int64_t waiters, int64_t joiners)
{
	return waiters < 0 || joiners <= 0 ? waiters : waiters + joiners;
}

int64_t prim_sum(int64_t a, int64_t b)
{
	return a < 0 || b < 0 ? -1 : a + b;
}

/* concurrent.futures' _state, in lower case; NULL if unknown. */
static const char *cf_state(struct pyproc *py, uint64_t obj)
{
	static const char *const states[] = {
		"pending", "running", "cancelled", "finished",
	};
	static const char *const upper[] = {
		"PENDING", "RUNNING", "CANCELLED", "FINISHED",
	};
	struct cs_err err;
	const char *s;
	size_t i;

	cs_err_init(&err);
	if (pystr_get(py, prim_attr(py, obj, "_state"), &s, &err) < 0)
		return NULL;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (!strcmp(s, upper[i]))
			return states[i];
	/* CANCELLED_AND_NOTIFIED */
	return strncmp(s, "CANCELLED", 9) ? NULL : "cancelled";
}

int py_future_done(struct pyproc *py, const struct py_prim_types *t,
		   uint64_t obj)
{
	struct cs_err err;
	uint64_t type;
	int32_t state;
	const char *s;

	cs_err_init(&err);
	if (!obj || pyobj_read_type(py, obj, &type, &err) < 0)
		return -1;
	/* The C future keeps its state in fut_state (0 pending). */
	if (t->c_future && py->layout.fut_state >= 0 &&
	    (type == t->c_future || pytype_is_subtype(py, type, t->c_future)))
		return py_field_i32(py, obj, py->layout.fut_state, &state,
				    &err) > 0 ? state != 0 : -1;
	s = cf_state(py, obj);
	if (s)
		return strcmp(s, "pending") && strcmp(s, "running");
	return -1;
}

/* How many of a gather's children are done. */
static void gather_state(struct pyproc *py, const struct py_prim_types *t,
			 struct py_prim *p)
{
	uint64_t list = prim_attr(py, p->addr, "_children"), *items;
	struct cs_err err;
	size_t n = 0, i;

	cs_err_init(&err);
	if (!list || pyseq_items(py, list, NULL, 0, &n, &err) < 0)
		return;
	p->children = (int64_t)n;
	if (n > MAX_GATHER_CHILDREN)
		return;     /* the count, not the done ones */
	items = xcalloc(n ? n : 1, sizeof(*items));
	if (pyseq_items(py, list, items, n, &n, &err) == 0) {
		p->done = 0;
		for (i = 0; i < n && i < MAX_GATHER_CHILDREN; i++)
			if (py_future_done(py, t, items[i]) == 1)
				p->done++;
	}
	free(items);
}

/* _thread.lock: bit 0 of its `locked` char (<= 3.12) or PyMutex
 * (3.13+); -1 when the version's table has no offset. */
static int c_lock_locked(struct pyproc *py, uint64_t o)
{
	uint8_t b;
	struct cs_err err;

	cs_err_init(&err);
	if (py->layout.lock_locked < 0 ||
	    memsrc_read(py->ms, o + (uint64_t)py->layout.lock_locked, &b, 1,
			&err) < 0)
		return -1;
	return b & 1;
}

/* _thread.RLock: its owner's thread ident and count (rlock_owner and
 * rlock_count <= 3.13, the _PyRecursiveMutex's thread and level 3.14). */
static void c_rlock_state(struct pyproc *py, struct py_prim *p)
{
	const struct py_layout *L = &py->layout;
	uint64_t count;
	struct cs_err err;

	cs_err_init(&err);
	if (L->rlock_owner < 0 ||
	    py_field_u64(py, p->addr, L->rlock_owner, &p->owner, &err) <= 0) {
		p->owner = 0;
		return;
	}
	p->locked = p->owner != 0;
	if (L->rlock_count >= 0 &&
	    py_field_u64(py, p->addr, L->rlock_count, &count, &err) > 0 &&
	    count < (1ull << 40))
		/* 3.14 counts re-entries only: level 0 is held once */
		p->count = p->owner ? (int64_t)count + L->rlock_count_base : 0;
}

/* A threading.Condition's lock (a Lock or an RLock): is it held?  Read
 * only when it is one: a Condition whose _lock is a Condition (itself,
 * in a hostile target) would recurse without end. */
static int cond_lock_locked(struct pyproc *py, const struct py_prim_types *t,
			    uint64_t lock)
{
	struct py_prim inner;
	uint64_t type;
	long i = prim_class(py, t, lock, &type);

	if (i < 0 ||
	    (t->kind[i] != PY_PRIM_LOCK && t->kind[i] != PY_PRIM_RLOCK) ||
	    !py_prim_read(py, t, lock, &inner))
		return -1;
	return inner.locked;
}

/* asyncio's Queue keeps its items and its getters' and putters'
 * futures in deques; queue's its items in `queue` and its waiters on
 * two Conditions. */
static void read_queue(struct pyproc *py, const struct py_prim_types *t,
		       struct py_prim *p, int aio)
{
	uint64_t o = p->addr;

	if (aio) {
		p->unfinished = prim_int_attr(py, o, "_unfinished_tasks");
		p->qsize = prim_len_attr(py, t, o, "_queue");
		p->maxsize = prim_int_attr(py, o, "_maxsize");
		p->waiters = prim_sum(
			prim_len_attr(py, t, o, "_getters"),
			prim_len_attr(py, t, o, "_putters"));
		p->waiters = prim_plus_joiners(p->waiters, prim_len(
			py, t, prim_attr2(py, o, "_finished", "_waiters")));
		return;
	}
	p->unfinished = prim_int_attr(py, o, "unfinished_tasks");
	p->qsize = prim_len_attr(py, t, o, "queue");
	p->maxsize = prim_int_attr(py, o, "maxsize");
	p->waiters = prim_sum(
		prim_len(py, t, prim_attr2(py, o, "not_empty", "_waiters")),
		prim_len(py, t, prim_attr2(py, o, "not_full", "_waiters")));
	p->waiters = prim_plus_joiners(p->waiters, prim_len(
		py, t, prim_attr2(py, o, "all_tasks_done", "_waiters")));
}

/* A child's pid and whether it was reaped: subprocess.Popen's own
 * `pid` and `returncode` (None until reaped), a multiprocessing.Process's
 * _popen's, an asyncio Process's `pid` and its transport's _returncode. */
static void child_state(struct pyproc *py, struct py_prim *p)
{
	uint64_t o = p->addr, popen = prim_attr(py, o, "_popen");
	uint64_t transport = prim_attr(py, o, "_transport");
	uint64_t rc = transport ? prim_attr(py, transport, "_returncode") :
		      prim_attr(py, popen ? popen : o, "returncode");
	struct cs_err err;

	p->pid = prim_int_attr(py, popen ? popen : o, "pid");
	cs_err_init(&err);
	if (rc && rc == py->types.none)
		p->exited = 0;
	else if (rc && pyobj_int_i64(py, rc, &p->returncode, &err) == 0)
		p->exited = 1;
}

/* An RLock's owner and count: the Python _RLock's attributes, or the C
 * one's fields. */
static void rlock_state(struct pyproc *py, struct py_prim *p)
{
	int64_t id;

	if (!prim_attr(py, p->addr, "_owner")) {
		c_rlock_state(py, p);
		return;
	}
	id = prim_int_attr(py, p->addr, "_owner");
	p->owner = id > 0 ? (uint64_t)id : 0;
	p->count = prim_int_attr(py, p->addr, "_count");
	p->locked = p->owner != 0;
}

static void thread_state(struct pyproc *py, struct py_prim *p)
{
	/* get_ident()'s value: a pthread_t, an address */
	int64_t id = prim_int_attr(py, p->addr, "_ident");

	p->ident = id > 0 ? (uint64_t)id : 0;
	p->daemon = prim_bool(py, prim_attr(py, p->addr, "_daemonic"));
}

/* A StreamReader's transport: asyncio's selector transports keep their
 * socket's fd (_sock_fd) and the server that accepted it (_server, None
 * for a client's). */
static void stream_state(struct pyproc *py, struct py_prim *p)
{
	uint64_t tr = prim_attr(py, p->addr, "_transport"), server;

	if (!tr || tr == py->types.none)
		return;
	p->fd = prim_int_attr(py, tr, "_sock_fd");
	server = prim_attr(py, tr, "_server");
	if (server)
		p->server_side = server != py->types.none;
}

static void read_state(struct pyproc *py, const struct py_prim_types *t,
		       struct py_prim *p)
{
	uint64_t o = p->addr, cond;
	int aio = p->family == PY_PRIM_ASYNCIO;

	switch (p->kind) {
	case PY_PRIM_LOCK:
		if (aio) {
			p->locked = prim_bool(py, prim_attr(py, o, "_locked"));
			p->waiters = prim_len_attr(py, t, o, "_waiters");
		} else {
			p->locked = c_lock_locked(py, o);
		}
		break;
	case PY_PRIM_RLOCK:
		rlock_state(py, p);
		break;
	case PY_PRIM_IMPORT_LOCK:
		prim_read_import_lock_state(py, t, p);
		break;
	case PY_PRIM_EVENT:
		if (aio) {
			p->set = prim_bool(py, prim_attr(py, o, "_value"));
			p->waiters = prim_len_attr(py, t, o, "_waiters");
		} else {
			p->set = prim_bool(py, prim_attr(py, o, "_flag"));
			p->waiters = prim_len(py, t, prim_attr2(py, o, "_cond",
								"_waiters"));
		}
		break;
	case PY_PRIM_CONDITION:
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		if (aio) {
			p->locked = prim_bool(py, prim_attr2(py, o, "_lock",
							      "_locked"));
			p->lock_waiters = prim_len(py, t, prim_attr2(
						   py, o, "_lock", "_waiters"));
		} else {
			p->inner = prim_attr(py, o, "_lock");
			p->locked = cond_lock_locked(py, t, p->inner);
		}
		break;
	case PY_PRIM_SEMAPHORE:
	case PY_PRIM_BOUNDED_SEMAPHORE:
		p->value = prim_int_attr(py, o, "_value");
		p->waiters = aio ? prim_len_attr(py, t, o, "_waiters") :
			     prim_len(py, t, prim_attr2(py, o, "_cond",
							"_waiters"));
		break;
	case PY_PRIM_BARRIER:
		p->parties = prim_int_attr(py, o, "_parties");
		p->value = prim_int_attr(py, o, "_count");
		cond = prim_attr(py, o, "_cond");
		p->waiters = prim_len_attr(py, t, cond, "_waiters");
		break;
	case PY_PRIM_QUEUE:
		read_queue(py, t, p, aio);
		break;
	case PY_PRIM_GATHER:
		gather_state(py, t, p);
		break;
	case PY_PRIM_CFUTURE:
		/* (Its _waiters are concurrent.futures.wait()'s only, not
		 * result()'s: no count that would mislead.) */
		p->fstate = cf_state(py, o);
		break;
	case PY_PRIM_THREAD:
		thread_state(py, p);
		break;
	case PY_PRIM_PROCESS:
		child_state(py, p);
		break;
	case PY_PRIM_POOL_RESULT:
		p->left = prim_int_attr(py, o, "_number_left");
		break;
	case PY_PRIM_STREAM:
		stream_state(py, p);
		break;
	}
}

int py_prim_read(struct pyproc *py, const struct py_prim_types *t,
		 uint64_t obj, struct py_prim *out)
{
	uint64_t type;
	long i = prim_class(py, t, obj, &type);

	if (i < 0)
		return 0;
	memset(out, 0, sizeof(*out));
	out->addr = obj;
	out->type = type;
	out->kind = t->kind[i];
	out->name = t->name[i];
	out->cls = prim_own_class(py, t, (size_t)i, type);
	out->family = t->family[i];
	out->locked = out->set = out->daemon = out->exited = -1;
	out->value = out->parties = out->qsize = out->maxsize = -1;
	out->waiters = out->pid = out->unfinished = out->left = -1;
	out->lock_waiters = -1;
	out->children = out->done = out->count = -1;
	out->in_use = out->limit = out->limit_per_host = -1;
	out->fd = -1;
	out->server_side = -1;
	if (out->family == PY_PRIM_TRIO)
		prim_read_trio_state(py, t, out);
	else if (out->family == PY_PRIM_ANYIO)
		prim_read_anyio_state(py, t, out);
	else if (out->family == PY_PRIM_TORNADO)
		prim_read_tornado_state(py, t, out);
	else if (out->family == PY_PRIM_GEVENT)
		prim_read_gevent_state(py, t, out);
	else if (out->family == PY_PRIM_AIOHTTP)
		prim_read_aiohttp_state(py, t, out);
	else
		read_state(py, t, out);
	return 1;
}

int py_prim_read_memo(struct pyproc *py, const struct py_prim_types *t,
		      struct py_prim_memo *m, uint64_t obj,
		      struct py_prim *out)
{
	int found;
	uintptr_t v = (uintptr_t)addrmap_get(&m->seen, obj, &found);

	if (found) {
		if (v)
			*out = m->read[v - 1];
		return v != 0;
	}
	if (!py_prim_read(py, t, obj, out)) {
		if (obj)
			addrmap_put(&m->seen, obj, NULL);
		return 0;
	}
	m->read = xgrow(m->read, &m->alloc, m->n + 1, sizeof(*m->read));
	m->read[m->n++] = *out;
	addrmap_put(&m->seen, obj, (void *)(uintptr_t)m->n);
	return 1;
}

void py_prim_memo_release(struct py_prim_memo *m)
{
	addrmap_release(&m->seen);
	free(m->read);
	memset(m, 0, sizeof(*m));
}

int py_prim_is_lock(const struct py_prim *p)
{
	/* tornado's Condition has no lock of its own to hold */
	if (p->kind == PY_PRIM_CONDITION && p->family == PY_PRIM_TORNADO)
		return 0;
	return p->kind == PY_PRIM_LOCK || p->kind == PY_PRIM_RLOCK ||
	       p->kind == PY_PRIM_IMPORT_LOCK ||
	       p->kind == PY_PRIM_CONDITION || p->kind == PY_PRIM_SEMAPHORE ||
	       p->kind == PY_PRIM_BOUNDED_SEMAPHORE;
}

int py_prim_thread_owned(const struct py_prim *p)
{
	return (p->kind == PY_PRIM_RLOCK || p->kind == PY_PRIM_IMPORT_LOCK) &&
	       p->family != PY_PRIM_GEVENT;
}

int py_prim_may_be_held(const struct py_prim *p)
{
	return py_prim_is_lock(p) && p->locked != 0;
}

int py_prim_is_future(const struct py_prim *p)
{
	return p->kind == PY_PRIM_GATHER || p->kind == PY_PRIM_CFUTURE ||
	       p->kind == PY_PRIM_THREAD || p->kind == PY_PRIM_POOL_RESULT;
}

static void sep(struct strbuf *out)
{
	if (out->len)
		strbuf_addstr(out, ", ");
}

void py_prim_state(const struct py_prim *p, struct strbuf *out)
{
	if (p->fstate)
		strbuf_addstr(out, p->fstate);
	if (p->children >= 0) {
		strbuf_addf(out, "%lld child%s", (long long)p->children,
			    p->children == 1 ? "" : "ren");
		if (p->done >= 0)
			strbuf_addf(out, ", %lld done", (long long)p->done);
	}
	if (p->locked >= 0)
		strbuf_addstr(out, p->locked ? "locked" : "unlocked");
	if (p->kind == PY_PRIM_RLOCK && p->locked == 1 && p->count > 0)
		strbuf_addf(out, ", count %lld", (long long)p->count);
	if (p->set >= 0)
		strbuf_addstr(out, p->set ? "set" : "not set");
	if (p->in_use >= 0) {
		sep(out);
		strbuf_addf(out, "%lld in use", (long long)p->in_use);
		if (p->limit > 0)
			strbuf_addf(out, " of limit %lld", (long long)p->limit);
		if (p->limit_per_host > 0)
			strbuf_addf(out, ", limit per host %lld",
				    (long long)p->limit_per_host);
	}
	if (p->kind == PY_PRIM_BARRIER && p->value >= 0 && p->parties >= 0) {
		sep(out);
		strbuf_addf(out, "%lld of %lld parties", (long long)p->value,
			    (long long)p->parties);
	} else if (p->value >= 0) {
		sep(out);
		strbuf_addf(out, "value %lld", (long long)p->value);
	}
	if (p->qsize >= 0) {
		sep(out);
		strbuf_addf(out, "qsize %lld", (long long)p->qsize);
		if (p->maxsize > 0)
			strbuf_addf(out, " of maxsize %lld", (long long)p->maxsize);
		/* said only where it tells more than qsize: items taken
		 * and not marked done, which a join() waits for */
		if (p->unfinished >= 0 && p->unfinished != p->qsize)
			strbuf_addf(out, ", %lld unfinished",
				    (long long)p->unfinished);
	}
	if (p->left >= 0) {
		sep(out);
		strbuf_addf(out, "%lld left", (long long)p->left);
	}
	if (p->pid > 0) {
		sep(out);
		strbuf_addf(out, "pid %lld", (long long)p->pid);
		if (p->exited == 1)
			strbuf_addf(out, ", exited (returncode %lld)",
				    (long long)p->returncode);
	}
	if (p->fd >= 0) {
		sep(out);
		strbuf_addf(out, "fd %lld", (long long)p->fd);
	}
	if (p->server_side == 1) {
		sep(out);
		strbuf_addstr(out, "a server's connection");
	}
	if (p->waiters >= 0) {
		sep(out);
		strbuf_addf(out, "%lld waiter%s", (long long)p->waiters,
			    p->waiters == 1 ? "" : "s");
	}
	/* (a notified waiter is no longer the Condition's but its lock's:
	 * without this, "0 waiters" beside a task that waits for it) */
	if (p->lock_waiters > 0) {
		sep(out);
		strbuf_addf(out, "%lld waiting for its lock",
			    (long long)p->lock_waiters);
	}
}

size_t prim_deque_items(struct pyproc *py, const struct py_prim_types *t,
			uint64_t v, uint64_t *out, size_t max)
{
	struct cs_err err;
	uint64_t type;
	size_t size;

	cs_err_init(&err);
	if (!v || !t->deque || pyobj_read_type(py, v, &type, &err) < 0 ||
	    (type != t->deque && !pytype_is_subtype(py, type, t->deque)) ||
	    pydeque_items(py, v, out, max, &size, &err) < 0)
		return 0;
	return size < max ? size : max;
}

size_t py_prim_waiter_futures(struct pyproc *py,
			      const struct py_prim_types *t,
			      const struct py_prim *p, uint64_t *out,
			      size_t max)
{
	uint64_t o = p->addr, pair[2];
	size_t n = 0, k, m, size;
	struct cs_err err;

	if (p->family != PY_PRIM_TORNADO)
		return 0;
	switch (p->kind) {
	case PY_PRIM_SEMAPHORE:
	case PY_PRIM_BOUNDED_SEMAPHORE:
	case PY_PRIM_CONDITION:
		return prim_deque_items(py, t, prim_attr(py, o, "_waiters"),
					out, max);
	case PY_PRIM_QUEUE:
		n = prim_deque_items(py, t, prim_attr(py, o, "_getters"), out,
				     max);
		m = prim_deque_items(py, t, prim_attr(py, o, "_putters"),
				     out + n, max - n);
		/* a putter is an (item, future) pair: its future */
		for (k = n; k < n + m; k++) {
			cs_err_init(&err);
			out[k] = pyseq_items(py, out[k], pair, 2, &size,
					     &err) == 0 && size == 2 ?
				 pair[1] : 0;
		}
		return n + m;
	default:
		return 0;
	}
}
