#include "readers/aio_class.h"

#include <string.h>

#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/objects.h"
#include "common/banned.h"

static uint64_t module_attr(struct pyproc *py, uint64_t interp,
			    const char *module, const char *name)
{
	uint64_t dict, value;

	if (pymodule_dict(py, interp, module, &dict, NULL) != 0 ||
	    pydict_get_str(py, dict, name, &value, NULL) != 0)
		return 0;
	return value;
}

static void find_set(struct pyproc *py, uint64_t interp,
		     struct aio_type_set *t)
{
	uint64_t *b = t->base;

	b[AIO_C_TASK] = module_attr(py, interp, "_asyncio", "Task");
	b[AIO_C_FUTURE] = module_attr(py, interp, "_asyncio", "Future");
	b[AIO_PY_TASK] = module_attr(py, interp, "asyncio.tasks", "_PyTask");
	b[AIO_PY_FUTURE] = module_attr(py, interp, "asyncio.futures",
				       "_PyFuture");
	b[AIO_TASKGROUP] = module_attr(py, interp, "asyncio.taskgroups",
				       "TaskGroup");
	b[AIO_CF_FUTURE] = module_attr(py, interp, "concurrent.futures._base",
				       "Future");
	b[AIO_MP_RESULT] = module_attr(py, interp, "multiprocessing.pool",
				       "ApplyResult");
	/* Without the C accelerator, Task and Future are the Python ones. */
	if (!b[AIO_PY_TASK])
		b[AIO_PY_TASK] = module_attr(py, interp, "asyncio.tasks", "Task");
	if (!b[AIO_PY_FUTURE])
		b[AIO_PY_FUTURE] = module_attr(py, interp, "asyncio.futures",
					       "Future");
	if (b[AIO_PY_TASK] == b[AIO_C_TASK])
		b[AIO_PY_TASK] = 0;
	if (b[AIO_PY_FUTURE] == b[AIO_C_FUTURE])
		b[AIO_PY_FUTURE] = 0;
}

void aio_types_find(struct aio_types *t, struct pyproc *py)
{
	struct addrmap seen;
	uint64_t interp;
	size_t n;

	memset(t, 0, sizeof(*t));
	t->py = py;
	addrmap_init(&t->classes);
	addrmap_init(&seen);
	if (pyproc_interp_head(py, &interp, NULL) < 0)
		interp = 0;
	for (n = 0; interp && n < AIO_MAX_INTERPS && addrmap_add(&seen, interp);
	     n++) {
		struct aio_type_set *set = &t->sets[t->nsets];

		find_set(py, interp, set);
		if (set->base[AIO_C_TASK] || set->base[AIO_C_FUTURE] ||
		    set->base[AIO_PY_TASK] || set->base[AIO_PY_FUTURE] ||
		    set->base[AIO_CF_FUTURE] || set->base[AIO_MP_RESULT])
			t->nsets++;
		if (py_field_u64(py, interp, py->layout.is_next, &interp,
				 NULL) < 0)
			break;
	}
	addrmap_release(&seen);
}

void aio_types_release(struct aio_types *t)
{
	addrmap_release(&t->classes);
	memset(t, 0, sizeof(*t));
}

/* Is type a subclass of class c of any interpreter? */
static int subtype_of(struct aio_types *t, uint64_t type, enum aio_class c)
{
	size_t i;

	for (i = 0; i < t->nsets; i++)
		if (t->sets[i].base[c] &&
		    pytype_is_subtype(t->py, type, t->sets[i].base[c]))
			return 1;
	return 0;
}

static enum aio_class classify_new(struct aio_types *t, uint64_t type)
{
	/* In this order: a Python Task in 3.6 is also a C Future. */
	static const enum aio_class order[] = {
		AIO_C_TASK, AIO_PY_TASK, AIO_C_FUTURE, AIO_PY_FUTURE,
		AIO_TASKGROUP, AIO_CF_FUTURE, AIO_MP_RESULT,
	};
	size_t k;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		if (subtype_of(t, type, order[k]))
			return order[k];
	return AIO_NONE;
}

int aio_is_c_future_type(struct aio_types *t, uint64_t type)
{
	return subtype_of(t, type, AIO_C_FUTURE);
}

enum aio_class aio_classify(struct aio_types *t, uint64_t type)
{
	/* Fibonacci hashing: type objects share their low bits. */
	struct aio_recent *r = &t->recent[(type * 0x9E3779B97F4A7C15ull) >>
					  (64 - AIO_RECENT_BITS)];
	uintptr_t c;

	if (type && type == r->type)
		return r->c;
	c = (uintptr_t)addrmap_get(&t->classes, type, NULL);
	if (!c) {
		if (!type)
			return AIO_NONE;
		c = (uintptr_t)classify_new(t, type);
		addrmap_put(&t->classes, type, (void *)c);
	}
	r->type = type;
	r->c = (enum aio_class)c;
	return (enum aio_class)c;
}

enum aio_class aio_classify_obj(struct aio_types *t, uint64_t obj)
{
	uint64_t type;

	if (!obj || pyobj_read_type(t->py, obj, &type, NULL) < 0)
		return AIO_NONE;
	return aio_classify(t, type);
}

int aio_is_task(enum aio_class c)
{
	return c == AIO_C_TASK || c == AIO_PY_TASK;
}

int aio_is_future(enum aio_class c)
{
	return aio_is_task(c) || c == AIO_C_FUTURE || c == AIO_PY_FUTURE;
}
