#include "readers/primitives.h"
#include "readers/primitives_internal.h"

#include <string.h>

#include "readers/dicts.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "readers/tasks.h"
#include "common/banned.h"

/* A capacity limiter's tokens left: its total (an int; math.inf is
 * unknown here) less its borrowers; -1 unknown. */
static int64_t tokens_left(struct pyproc *py, const struct py_prim_types *t,
			   uint64_t limiter)
{
	int64_t tokens = prim_int_attr(py, limiter, "_total_tokens");
	int64_t used = prim_len_attr(py, t, limiter, "_borrowers");

	return tokens < 0 || used < 0 ? -1 : tokens > used ? tokens - used : 0;
}

/*
 * trio's: a Lock's owner is a task (None: unlocked), its waiters parked
 * in its ParkingLot (an OrderedDict of tasks, `_parked`), as are a
 * Semaphore's, a CapacityLimiter's and a Condition's (whose lock is a
 * trio.Lock); an Event keeps its waiting tasks in a set.  A memory
 * channel's both ends share a state: its buffer (a deque), its bound
 * (an int, or math.inf: unknown here) and the tasks waiting to send
 * and to receive.
 */
static int64_t parked(struct pyproc *py, const struct py_prim_types *t,
		      uint64_t o)
{
	return prim_len(py, t, prim_attr2(py, o, "_lot", "_parked"));
}

static int trio_owner(struct pyproc *py, uint64_t lock, uint64_t *task)
{
	uint64_t owner = prim_attr(py, lock, "_owner");

	*task = owner && owner != py->types.none ? owner : 0;
	return owner ? *task != 0 : -1;
}

static int is_trio_task(struct pyproc *py, uint64_t obj)
{
	uint64_t type;
	const char *name;

	if (pyobj_read_type(py, obj, &type, NULL) < 0)
		return 0;
	name = py_type_name_cached(py, type);
	return name && !strcmp(py_short_type_name(name), "Task");
}

void prim_read_trio_state(struct pyproc *py, const struct py_prim_types *t,
			  struct py_prim *p)
{
	uint64_t o = p->addr, state;

	switch (p->kind) {
	case PY_PRIM_LOCK: {
		struct cs_err err;

		p->locked = trio_owner(py, o, &p->owner_task);
		p->waiters = parked(py, t, o);
		/* (named only when it is a trio Task: a lying lock may
		 * name anything its owner) */
		cs_err_init(&err);
		if (p->owner_task && is_trio_task(py, p->owner_task) &&
		    pystr_get(py, prim_attr(py, p->owner_task, "name"),
			      &p->owner_name, &err) < 0)
			p->owner_name = NULL;
		break;
	}
	case PY_PRIM_CONDITION: {
		uint64_t ignored;

		p->locked = trio_owner(py, prim_attr(py, o, "_lock"), &ignored);
		p->waiters = parked(py, t, o);
		p->lock_waiters = parked(py, t, prim_attr(py, o, "_lock"));
		break;
	}
	case PY_PRIM_EVENT:
		p->set = prim_bool(py, prim_attr(py, o, "_flag"));
		p->waiters = prim_len_attr(py, t, o, "_tasks");
		break;
	case PY_PRIM_SEMAPHORE:
		p->value = prim_attr(py, o, "_total_tokens") ? tokens_left(py, t, o) :
			   prim_int_attr(py, o, "_value");
		p->waiters = parked(py, t, o);
		break;
	case PY_PRIM_QUEUE:
		state = prim_attr(py, o, "_state");
		p->qsize = prim_len_attr(py, t, state, "data");
		p->maxsize = prim_int_attr(py, state, "max_buffer_size");
		p->waiters = prim_sum(prim_len_attr(py, t, state, "send_tasks"),
				      prim_len_attr(py, t, state,
						    "receive_tasks"));
		break;
	default:
		break;
	}
}

/*
 * anyio's: a Lock's owner is a TaskInfo in `_owner_task` (deleted when
 * unlocked: the class's None shows through) whose `id` is id() of the
 * task, its address; Lock, Semaphore and Condition keep their waiters
 * in a deque; the asyncio backend's CapacityLimiter its borrowers in a
 * set and its waiters in an OrderedDict; the trio backend's wraps a
 * trio.CapacityLimiter (`__original`, mangled), which knows both.  An
 * Event wraps its backend's: asyncio's in `_event` (its flag `_value`,
 * its waiters' futures a deque), trio's in `__original` (`_flag`, its
 * waiting tasks a set).
 */
static int anyio_owner(struct pyproc *py, uint64_t lock, uint64_t *task,
		       uint64_t *coro)
{
	struct cs_err err;
	uint64_t info = 0;
	int64_t id;

	*task = *coro = 0;
	cs_err_init(&err);
	/* the instance's (its dict or a slot), or else the class's None;
	 * anything else of the class's (an unset slot's descriptor) is no
	 * owner */
	if (!lock)
		return -1;
	info = prim_attr(py, lock, "_owner_task");
	if (!info)
		return pyobj_lookup(py, lock, "_owner_task", &info, &err) == 0 &&
		       info == py->types.none ? 0 : -1;
	if (info == py->types.none)
		return 0;
	id = prim_int_attr(py, info, "id");
	if (id > 0) {
		*task = (uint64_t)id;
		/* TaskInfo keeps the coroutine, not the task: a task gone
		 * since may have left its address to another */
		*coro = prim_attr(py, info, "coro");
	} else {
		*task = info;   /* (later anyio keeps the task itself) */
	}
	return 1;
}

void prim_read_anyio_state(struct pyproc *py, const struct py_prim_types *t,
			   struct py_prim *p)
{
	uint64_t o = p->addr, ignored, ignored2, inner, state;

	switch (p->kind) {
	case PY_PRIM_LOCK:
		p->locked = anyio_owner(py, o, &p->owner_task, &p->owner_coro);
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		break;
	case PY_PRIM_CONDITION:
		p->locked = anyio_owner(py, prim_attr(py, o, "_lock"), &ignored,
					&ignored2);
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		p->lock_waiters = prim_len_attr(py, t, prim_attr(py, o, "_lock"),
						"_waiters");
		break;
	case PY_PRIM_EVENT:
		if ((inner = prim_attr(py, o, "_Event__original"))) {
			p->set = prim_bool(py, prim_attr(py, inner, "_flag"));
			p->waiters = prim_len_attr(py, t, inner, "_tasks");
		} else if ((inner = prim_attr(py, o, "_event"))) {
			p->set = prim_bool(py, prim_attr(py, inner, "_value"));
			p->waiters = prim_len_attr(py, t, inner, "_waiters");
		}
		break;
	case PY_PRIM_SEMAPHORE:
		if ((inner = prim_attr(py, o, "_CapacityLimiter__original"))) {
			p->value = tokens_left(py, t, inner);
			p->waiters = parked(py, t, inner);
		} else if (prim_attr(py, o, "_total_tokens")) {
			p->value = tokens_left(py, t, o);
			p->waiters = prim_len_attr(py, t, o, "_wait_queue");
		} else {
			p->value = prim_int_attr(py, o, "_value");
			p->waiters = prim_len_attr(py, t, o, "_waiters");
		}
		break;
	case PY_PRIM_QUEUE:
		/* a memory object stream's shared state (a dataclass; its
		 * max_buffer_size may be a float, inf: then not said) */
		state = prim_attr(py, o, "_state");
		p->qsize = prim_len_attr(py, t, state, "buffer");
		p->maxsize = prim_int_attr(py, state, "max_buffer_size");
		p->waiters = prim_sum(
			prim_len_attr(py, t, state, "waiting_senders"),
			prim_len_attr(py, t, state, "waiting_receivers"));
		break;
	default:
		break;
	}
}

/*
 * tornado's: a Lock is a BoundedSemaphore of one (`_block`); a
 * Semaphore's value and its waiters' futures (a deque, which may keep a
 * timed-out one until the next release); an Event's flag and its
 * waiters' futures (a set); a Condition's waiters' futures (a deque); a
 * Queue's items (a deque, or a list for PriorityQueue and LifoQueue),
 * its getters' futures and its putters' (item, future) pairs (deques).
 */
void prim_read_tornado_state(struct pyproc *py,
			     const struct py_prim_types *t, struct py_prim *p)
{
	uint64_t o = p->addr, block;

	switch (p->kind) {
	case PY_PRIM_LOCK:
		block = prim_attr(py, o, "_block");
		p->value = prim_int_attr(py, block, "_value");
		p->locked = p->value < 0 ? -1 : p->value == 0;
		p->value = -1;
		p->waiters = prim_len_attr(py, t, block, "_waiters");
		break;
	case PY_PRIM_EVENT:
		p->set = prim_bool(py, prim_attr(py, o, "_value"));
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		break;
	case PY_PRIM_SEMAPHORE:
	case PY_PRIM_BOUNDED_SEMAPHORE:
		p->value = prim_int_attr(py, o, "_value");
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		break;
	case PY_PRIM_CONDITION:
		p->waiters = prim_len_attr(py, t, o, "_waiters");
		break;
	case PY_PRIM_QUEUE:
		p->unfinished = prim_int_attr(py, o, "_unfinished_tasks");
		p->qsize = prim_len_attr(py, t, o, "_queue");
		p->maxsize = prim_int_attr(py, o, "_maxsize");
		p->waiters = prim_sum(prim_len_attr(py, t, o, "_getters"),
				      prim_len_attr(py, t, o, "_putters"));
		p->waiters = prim_plus_joiners(p->waiters, prim_len(
			py, t, prim_attr2(py, o, "_finished", "_waiters")));
		break;
	default:
		break;
	}
}

/* An int, or a list's length (importlib's counters became lists of
 * None in 3.12); -1 for neither. */
static int64_t int_or_len(struct pyproc *py, const struct py_prim_types *t,
			  uint64_t v)
{
	int64_t n = prim_len(py, t, v);

	return n >= 0 ? n : prim_int(py, v);
}

void prim_read_import_lock_state(struct pyproc *py,
				 const struct py_prim_types *t,
				 struct py_prim *p)
{
	int64_t owner = prim_int_attr(py, p->addr, "owner");

	p->owner = owner > 0 ? (uint64_t)owner : 0;
	p->count = int_or_len(py, t, prim_attr(py, p->addr, "count"));
	p->locked = p->count < 0 ? -1 : p->count > 0;
	p->waiters = int_or_len(py, t, prim_attr(py, p->addr, "waiters"));
}
