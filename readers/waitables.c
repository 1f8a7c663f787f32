#include "readers/waitables.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/funcs.h"
#include "common/banned.h"

static int visit(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct py_waitables_scan *s = data;
	size_t i;

	(void)interp;
	/* exact classes: a subclass test per object would cost the walk
	 * a type's MRO for every one of a large heap's objects */
	for (i = 0; i < s->ntypes && type != s->types[i]; i++)
		;
	if (i == s->ntypes)
		return 0;
	if (s->n >= PY_MAX_WAITABLES)
		return 1;
	s->addrs = xgrow(s->addrs, &s->alloc, s->n + 1, sizeof(*s->addrs));
	s->addrs[s->n++] = obj;
	return 0;
}

int py_waitables_prepare(struct pyproc *py, struct py_waitables_scan *s,
			 struct py_gc_visit *v)
{
	static const char *const classes[][2] = {
		{ "tornado.locks", "Lock" },
		{ "tornado.locks", "Semaphore" },
		{ "tornado.locks", "BoundedSemaphore" },
		{ "tornado.locks", "Condition" },
		{ "tornado.queues", "Queue" },
		{ "tornado.queues", "PriorityQueue" },
		{ "tornado.queues", "LifoQueue" },
	};
	size_t i;

	_Static_assert(sizeof(classes) / sizeof(classes[0]) ==
		       PY_WAITABLE_TYPES, "one slot per class");
	memset(s, 0, sizeof(*s));
	for (i = 0; i < PY_WAITABLE_TYPES; i++) {
		uint64_t type = py_module_attr(py, classes[i][0],
					       classes[i][1]);

		if (type)
			s->types[s->ntypes++] = type;
		else if (i == 0)
			return 0;   /* no tornado.locks: nothing to look for */
	}
	v->fn = visit;
	v->data = s;
	return 1;
}

void py_waitables_finish(struct py_waitables_scan *s, struct py_async *a)
{
	free(a->waitables);
	a->waitables = s->addrs;
	a->nwaitables = s->n;
	s->addrs = NULL;
	s->n = s->alloc = 0;
}

void py_waitables_scan_release(struct py_waitables_scan *s)
{
	free(s->addrs);
	memset(s, 0, sizeof(*s));
}
