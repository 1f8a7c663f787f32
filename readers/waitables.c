#include "readers/waitables.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/primitives.h"
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
	if (s->n >= PY_MAX_WAITABLES) {
		s->cut = 1;
		return 1;
	}
	s->found = xgrow(s->found, &s->alloc, s->n + 1, sizeof(*s->found));
	s->found[s->n].addr = obj;
	s->found[s->n++].kind = s->kinds[i];
	return 0;
}

int py_waitables_prepare(struct pyproc *py, struct py_waitables_scan *s,
			 struct py_gc_visit *v)
{
	static const struct {
		const char *mod, *name;
		int kind;
	} classes[] = {
		{ "tornado.locks", "Lock", PY_PRIM_LOCK },
		{ "tornado.locks", "Semaphore", PY_PRIM_SEMAPHORE },
		{ "tornado.locks", "BoundedSemaphore",
		  PY_PRIM_BOUNDED_SEMAPHORE },
		{ "tornado.locks", "Condition", PY_PRIM_CONDITION },
		{ "tornado.queues", "Queue", PY_PRIM_QUEUE },
		{ "tornado.queues", "PriorityQueue", PY_PRIM_QUEUE },
		{ "tornado.queues", "LifoQueue", PY_PRIM_QUEUE },
		{ "gevent.thread", "LockType", PY_PRIM_LOCK },
		{ "gevent.lock", "Semaphore", PY_PRIM_SEMAPHORE },
		{ "gevent.lock", "BoundedSemaphore",
		  PY_PRIM_BOUNDED_SEMAPHORE },
		{ "gevent.lock", "RLock", PY_PRIM_RLOCK },
		{ "gevent.event", "Event", PY_PRIM_EVENT },
		{ "gevent.event", "AsyncResult", PY_PRIM_EVENT },
		{ "gevent.queue", "Queue", PY_PRIM_QUEUE },
		{ "gevent.queue", "JoinableQueue", PY_PRIM_QUEUE },
		{ "gevent.queue", "PriorityQueue", PY_PRIM_QUEUE },
		{ "gevent.queue", "LifoQueue", PY_PRIM_QUEUE },
		{ "gevent.queue", "UnboundQueue", PY_PRIM_QUEUE },
		{ "gevent.queue", "Channel", PY_PRIM_QUEUE },
	};
	const char *mod = NULL;
	uint64_t interp = 0, dict = 0, type;
	size_t i;

	_Static_assert(sizeof(classes) / sizeof(classes[0]) ==
		       PY_WAITABLE_TYPES, "one slot per class");
	memset(s, 0, sizeof(*s));
	if (pyproc_interp_head(py, &interp, NULL) < 0 || !interp)
		return 0;
	for (i = 0; i < PY_WAITABLE_TYPES; i++) {
		/* a module's dict looked up once for its classes */
		if (!mod || strcmp(mod, classes[i].mod)) {
			mod = classes[i].mod;
			if (pymodule_dict(py, interp, mod, &dict, NULL) != 0)
				dict = 0;
		}
		if (dict && pydict_get_str(py, dict, classes[i].name, &type,
					   NULL) == 0 && type) {
			s->types[s->ntypes] = type;
			s->kinds[s->ntypes++] = classes[i].kind;
		}
	}
	if (!s->ntypes)
		return 0;  /* neither tornado nor gevent: nothing to do */
	v->fn = visit;
	v->data = s;
	return 1;
}

void py_waitables_finish(struct py_waitables_scan *s, struct py_async *a)
{
	free(a->waitables);
	a->waitables = s->found;
	a->nwaitables = s->n;
	a->waitables_cut = s->cut;
	s->found = NULL;
	s->n = s->alloc = 0;
}

void py_waitables_scan_release(struct py_waitables_scan *s)
{
	free(s->found);
	memset(s, 0, sizeof(*s));
}
