#include "readers/aio_class.h"

#include <string.h>

#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

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

void aio_types_find(struct aio_types *t, struct pyproc *py)
{
	struct cs_err err;
	uint64_t interp;

	memset(t, 0, sizeof(*t));
	t->py = py;
	addrmap_init(&t->classes);
	cs_err_init(&err);
	if (pyproc_interp_head(py, &interp, &err) < 0 || !interp)
		return;
	t->c_task = module_attr(py, interp, "_asyncio", "Task");
	t->c_future = module_attr(py, interp, "_asyncio", "Future");
	t->py_task = module_attr(py, interp, "asyncio.tasks", "_PyTask");
	t->py_future = module_attr(py, interp, "asyncio.futures", "_PyFuture");
	t->taskgroup = module_attr(py, interp, "asyncio.taskgroups",
				   "TaskGroup");
	/* Without the C accelerator, Task and Future are the Python ones. */
	if (!t->py_task)
		t->py_task = module_attr(py, interp, "asyncio.tasks", "Task");
	if (!t->py_future)
		t->py_future = module_attr(py, interp, "asyncio.futures",
					   "Future");
	if (t->py_task == t->c_task)
		t->py_task = 0;
	if (t->py_future == t->c_future)
		t->py_future = 0;
}

void aio_types_release(struct aio_types *t)
{
	addrmap_release(&t->classes);
	memset(t, 0, sizeof(*t));
}

static enum aio_class classify_new(struct aio_types *t, uint64_t type)
{
	struct pyproc *py = t->py;

	if (t->c_task && pytype_is_subtype(py, type, t->c_task))
		return AIO_C_TASK;
	if (t->py_task && pytype_is_subtype(py, type, t->py_task))
		return AIO_PY_TASK;
	if (t->c_future && pytype_is_subtype(py, type, t->c_future))
		return AIO_C_FUTURE;
	if (t->py_future && pytype_is_subtype(py, type, t->py_future))
		return AIO_PY_FUTURE;
	if (t->taskgroup && pytype_is_subtype(py, type, t->taskgroup))
		return AIO_TASKGROUP;
	return AIO_NONE;
}

enum aio_class aio_classify(struct aio_types *t, uint64_t type)
{
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
	c = (uintptr_t)classify_new(t, type);
	addrmap_put(&t->classes, type, (void *)c);
	return (enum aio_class)c;
}

enum aio_class aio_classify_obj(struct aio_types *t, uint64_t obj)
{
	struct cs_err err;
	uint64_t type;

	cs_err_init(&err);
	if (!obj || pyobj_read_type(t->py, obj, &type, &err) < 0)
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
