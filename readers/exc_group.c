/*
 * A failed task's exception group: the exceptions in it.  A TaskGroup
 * (3.11+) whose child raised ends its `async with` by raising an
 * ExceptionGroup, and so does a trio nursery: the group's traceback
 * leads to the `async with` line and the group's machinery, and where
 * the child raised is in the traceback of the exception inside.  Groups
 * in a group are followed; what is kept is each exception that is no
 * group, in the group's order.
 */
#include "readers/tasks.h"

#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "readers/repr.h"
#include "common/banned.h"

/* Items read of one group's list or tuple, and exceptions looked at in all: a
 * bound on a walk through tuples the target controls (a group may even
 * hold itself). */
#define GROUP_ITEMS_MAX 64
#define GROUP_VISITS_MAX 1024

struct group_walk {
	struct pyproc *py;
	struct arena *pool;
	struct py_failed_task *t;
	uint64_t base;         /* the builtin BaseExceptionGroup, or 0 */
	uint64_t exception;    /* BaseException */
	size_t visits;
};

static int is_a(const struct group_walk *w, uint64_t obj, uint64_t cls)
{
	uint64_t type;

	return cls && pyobj_read_type(w->py, obj, &type, NULL) == 0 &&
	       (type == cls || pytype_is_subtype(w->py, type, cls));
}

/* A list or a tuple (subclasses too)? */
static int is_sequence(const struct group_walk *w, uint64_t v)
{
	size_t size;

	return v && pyseq_items(w->py, v, NULL, 0, &size, NULL) == 0;
}

/* The list or tuple of exceptions that exception exc groups, or 0 when
 * it is no group: a builtin BaseExceptionGroup's (3.11+), else one in
 * its own attribute `exceptions` (anyio 3's groups, trio's MultiError)
 * or `_exceptions` (the exceptiongroup backport's, before 3.11). */
static uint64_t group_items(const struct group_walk *w, uint64_t exc)
{
	uint64_t v = 0;

	/* (the builtin's `exceptions` member is out of reach: a builtin
	 * type's dict is its interpreter's from 3.12) */
	if (is_a(w, exc, w->base))
		return py_field_u64(w->py, exc, w->py->layout.exc_group_excs,
				    &v, NULL) == 1 ? v : 0;
	if (pyobj_get_attr(w->py, exc, "exceptions", &v, NULL) == 0 &&
	    is_sequence(w, v))
		return v;
	if (pyobj_get_attr(w->py, exc, "_exceptions", &v, NULL) == 0 &&
	    is_sequence(w, v))
		return v;
	return 0;
}

static void keep_leaf(struct group_walk *w, uint64_t exc)
{
	struct py_failed_task *t = w->t;
	struct py_exc_leaf *l;
	struct strbuf sb;

	if (t->nleaves == PY_MAX_GROUP_LEAVES) {
		t->leaves_more++;
		return;
	}
	l = &t->leaves[t->nleaves++];
	strbuf_init(&sb);
	pyrepr_exception(w->py, exc, &sb);
	l->exc_repr = arena_strdup(w->pool, sb.buf);
	strbuf_release(&sb);
	py_exception_sites(w->py, exc, &l->sites);
}

/* The exceptions in list or tuple excs, of a group depth groups deep
 * (what is no exception is left out). */
static void walk_group(struct group_walk *w, uint64_t excs, int depth)
{
	uint64_t items[GROUP_ITEMS_MAX], inner;
	size_t size = 0, n, i;

	if (pyseq_items(w->py, excs, items, GROUP_ITEMS_MAX, &size, NULL) < 0)
		return;
	n = size < GROUP_ITEMS_MAX ? size : GROUP_ITEMS_MAX;
	for (i = 0; i < n && w->visits < GROUP_VISITS_MAX; i++) {
		w->visits++;
		if (!is_a(w, items[i], w->exception))
			continue;
		if (!(inner = group_items(w, items[i])))
			keep_leaf(w, items[i]);
		else if (depth + 1 < PY_MAX_GROUP_DEPTH)
			walk_group(w, inner, depth + 1);
		else
			w->t->leaves_more++;   /* (a group, counted as one) */
	}
	/* (those not looked at, each counted as one) */
	w->t->leaves_more += size - i;
}

void py_exc_group_leaves(struct pyproc *py, uint64_t exc, struct arena *pool,
			 struct py_failed_task *t)
{
	struct group_walk w;
	uint64_t excs;

	w.py = py;
	w.pool = pool;
	w.t = t;
	w.visits = 0;
	/* (none before 3.11) */
	w.base = py->layout.exc_group_excs < 0 ? 0 :
		 py_module_attr(py, "builtins", "BaseExceptionGroup");
	w.exception = py_module_attr(py, "builtins", "BaseException");
	if (!exc || !w.exception || !(excs = group_items(&w, exc)))
		return;
	t->group = 1;
	walk_group(&w, excs, 0);
}
