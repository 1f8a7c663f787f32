#include "readers/semlocks.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

static int visit(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct py_semlock_scan *s = data;
	size_t i;

	(void)interp;
	/* exact classes, as readers/waitables.c: no MRO per object */
	for (i = 0; i < s->ntypes && type != s->types[i]; i++)
		;
	if (i == s->ntypes)
		return 0;
	if (s->n >= PY_MAX_SEMLOCKS) {
		s->cut = 1;
		return 1;
	}
	s->found = xgrow(s->found, &s->alloc, s->n + 1, sizeof(*s->found));
	s->found[s->n++] = obj;
	return 0;
}

int py_semlocks_prepare(struct pyproc *py, struct py_semlock_scan *s,
			struct py_gc_visit *v)
{
	static const char *const classes[PY_SEMLOCK_TYPES][2] = {
		{ "Lock", "multiprocessing.Lock" },
		{ "RLock", "multiprocessing.RLock" },
		{ "Semaphore", "multiprocessing.Semaphore" },
		{ "BoundedSemaphore", "multiprocessing.BoundedSemaphore" },
	};
	/* (the first two: the ones a thread holds) */
	const struct py_layout *l = &py->layout;
	uint64_t interp = 0, dict = 0, type;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (l->semlock_handle < 0 || l->semlock_last_tid < 0 ||
	    l->semlock_count < 0 || l->semlock_maxvalue < 0 ||
	    l->semlock_kind < 0 ||
	    pyproc_interp_head(py, &interp, NULL) < 0 || !interp ||
	    pymodule_dict(py, interp, "multiprocessing.synchronize", &dict,
			  NULL) != 0 || !dict)
		return 0;
	for (i = 0; i < PY_SEMLOCK_TYPES; i++)
		if (pydict_get_str(py, dict, classes[i][0], &type, NULL) == 0 &&
		    type) {
			s->types[s->ntypes] = type;
			s->owned[s->ntypes] = i < 2;
			s->names[s->ntypes++] = classes[i][1];
		}
	if (!s->ntypes)
		return 0;
	v->fn = visit;
	v->data = s;
	return 1;
}

/* obj's SemLock read into out: 0, or -1 when it is none or unreadable. */
static int read_one(struct pyproc *py, uint64_t obj, const char *name,
		    int owned, struct py_semlock *out)
{
	const struct py_layout *l = &py->layout;
	uint64_t sl, type, word;
	int32_t count, maxvalue, kind;
	const char *tname;
	struct cs_err err;

	cs_err_init(&err);
	sl = pyobj_own_or_0(py, obj, "_semlock");
	if (!sl || pyobj_read_type(py, sl, &type, &err) < 0 ||
	    !(tname = py_type_name_cached(py, type)) ||
	    strcmp(tname, "_multiprocessing.SemLock") ||
	    py_field_u64(py, sl, l->semlock_handle, &out->handle, &err) < 0 ||
	    py_field_u64(py, sl, l->semlock_last_tid, &out->last_tid,
			 &err) < 0 ||
	    py_field_i32(py, sl, l->semlock_count, &count, &err) < 0 ||
	    py_field_i32(py, sl, l->semlock_maxvalue, &maxvalue, &err) < 0 ||
	    py_field_i32(py, sl, l->semlock_kind, &kind, &err) < 0 ||
	    !out->handle)
		return -1;
	/* (glibc's sem_t: the value in the low half of its first word,
	 * the count of its waiters in the high half) */
	out->value = py_field_u64(py, out->handle, 0, &word, &err) < 0 ? -1 :
		     (int64_t)(word & 0xffffffffu);
	out->addr = obj;
	out->semlock = sl;
	out->name = name;
	out->owned = owned;
	out->count = count;
	out->maxvalue = maxvalue;
	/* (_multiprocessing's RECURSIVE_MUTEX) */
	out->recursive = kind == 0;
	return 0;
}

/* What multiprocessing says this process is (py_async.mp_child). */
static int mp_child(struct pyproc *py)
{
	uint64_t interp = 0, dict = 0, cur = 0, type;
	const char *name;
	struct cs_err err;

	cs_err_init(&err);
	if (pyproc_interp_head(py, &interp, NULL) < 0 || !interp ||
	    pymodule_dict(py, interp, "multiprocessing.process", &dict,
			  NULL) != 0 || !dict ||
	    pydict_get_str(py, dict, "_current_process", &cur, NULL) != 0 ||
	    !cur || pyobj_read_type(py, cur, &type, &err) < 0 ||
	    !(name = py_type_name_cached(py, type)))
		return -1;
	return strcmp(name, "_MainProcess") != 0;
}

void py_semlocks_finish(struct pyproc *py, struct py_semlock_scan *s,
			struct py_async *a)
{
	size_t i, k, n = 0;
	uint64_t type;
	struct cs_err err;

	free(a->semlocks);
	a->semlocks = s->n ? xmallocarray(s->n, sizeof(*a->semlocks)) : NULL;
	/* Bounded by PY_MAX_SEMLOCKS. */
	for (i = 0; i < s->n; i++) {
		cs_err_init(&err);
		if (pyobj_read_type(py, s->found[i], &type, &err) < 0)
			continue;
		for (k = 0; k < s->ntypes && s->types[k] != type; k++)
			;
		if (k < s->ntypes &&
		    read_one(py, s->found[i], s->names[k], s->owned[k],
			     &a->semlocks[n]) == 0)
			n++;
	}
	a->nsemlocks = n;
	a->semlocks_cut = s->cut;
	a->mp_child = n ? mp_child(py) : -1;
}

void py_semlocks_scan_release(struct py_semlock_scan *s)
{
	free(s->found);
	memset(s, 0, sizeof(*s));
}
