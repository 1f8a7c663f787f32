#include "readers/gc.h"

#include <string.h>

#include "common/addrmap.h"
#include "readers/fields.h"
#include "common/banned.h"

/* A generation count this large means we are reading garbage. */
#define MAX_GENERATIONS 3
/* Low bits of _gc_next/_gc_prev carry flags from 3.8 on (two on prev);
 * objects are 16-byte aligned, so masking three bits loses nothing. */
#define GC_PTR_MASK (~(uint64_t)7)

struct walk {
	struct pyproc *py;
	py_gc_visitor visit;
	void *data;
	uint64_t interp;          /* whose lists are walked, 0 unknown */
	uint64_t visited;
	int stop;
};

/* Walk one circular list from its head. */
static int walk_list(struct walk *w, uint64_t head, struct cs_err *err)
{
	const struct py_layout *L = &w->py->layout;
	size_t hsize = (size_t)L->gc_head_size;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	uint64_t node, prev;
	int ret;

	if (hsize + 16 > sizeof(buf))
		CS_BUG("PyGC_Head of %zu bytes", hsize);
	ret = py_field_u64(w->py, head, L->gc_head_next, &node, err);
	if (ret < 0)
		return ret;
	node &= GC_PTR_MASK;
	prev = head;
	while (node && node != head && !w->stop) {
		uint64_t obj = node + hsize;

		if (++w->visited > PY_GC_MAX_OBJECTS)
			return cs_fail(err, CS_ERR_MEMORY,
				       "more than %u GC objects: a corrupt list?",
				       PY_GC_MAX_OBJECTS);
		/* The GC header and the object's refcount and type in one read. */
		ret = memsrc_read(w->py->ms, node, buf, hsize + 16, err);
		if (ret < 0)
			return ret;
		/* Each node must point back at the one we came from: this
		 * catches a list being changed under us and any loop that does
		 * not pass through the head. */
		if ((field_u64(buf, sizeof(buf), L->gc_head_prev) & GC_PTR_MASK) !=
		    prev)
			return cs_fail(err, CS_ERR_MEMORY,
				       "GC list changed or corrupt at 0x%llx",
				       (unsigned long long)node);
		prev = node;
		if (w->visit(obj, field_u64(buf, sizeof(buf),
					    (int)hsize + L->ob_type), w->interp,
			     w->data))
			w->stop = 1;
		node = field_u64(buf, sizeof(buf), L->gc_head_next) & GC_PTR_MASK;
	}
	return 0;
}

/* Address of struct _gc_runtime_state for one interpreter, or 0. */
static uint64_t gc_state(struct pyproc *py, uint64_t interp)
{
	const struct py_layout *L = &py->layout;

	if (L->is_gc >= 0)
		return interp + (uint64_t)L->is_gc;
	if (L->rt_gc >= 0 && py->runtime)
		return py->runtime + (uint64_t)L->rt_gc;
	return 0;
}

static int walk_state(struct walk *w, uint64_t generations,
		      uint64_t permanent, struct cs_err *err)
{
	const struct py_layout *L = &w->py->layout;
	int i, ret = 0;

	for (i = 0; i < MAX_GENERATIONS && ret == 0 && !w->stop; i++)
		ret = walk_list(w, generations +
				(uint64_t)(i * L->gc_generation_size) +
				(uint64_t)L->gc_gen_head, err);
	if (ret == 0 && permanent && !w->stop)
		ret = walk_list(w, permanent + (uint64_t)L->gc_gen_head, err);
	return ret;
}

int py_gc_walk(struct pyproc *py, py_gc_visitor visit, void *data,
	       struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct walk w = { py, visit, data, 0, 0, 0 };
	uint64_t interp, state, gen0;
	struct addrmap seen;
	int n, ret;

	if (py->gc_generation0_var) {
		/* 3.6: one static generations[] array, reached through the
		 * exported pointer to its first head. */
		ret = memsrc_read_u64(py->ms, py->gc_generation0_var, &gen0, err);
		if (ret < 0)
			return ret;
		return walk_state(&w, gen0 - (uint64_t)L->gc_gen_head, 0, err);
	}
	if (L->rt_gc >= 0) {
		/* 3.7, 3.8: one state for the whole runtime. */
		state = gc_state(py, 0);
		if (!state)
			return cs_fail(err, CS_ERR_MEMORY, "no GC state found");
		return walk_state(&w, state + (uint64_t)L->gc_generations,
				  L->gc_permanent_generation >= 0 ?
				  state + (uint64_t)L->gc_permanent_generation : 0,
				  err);
	}
	ret = pyproc_interp_head(py, &interp, err);
	addrmap_init(&seen);
	for (n = 0; ret == 0 && interp && n < 256 && !w.stop; n++) {
		/* a corrupt list must not walk one heap twice */
		if (!addrmap_add(&seen, interp))
			break;
		state = gc_state(py, interp);
		w.interp = interp;
		ret = walk_state(&w, state + (uint64_t)L->gc_generations,
				 L->gc_permanent_generation >= 0 ?
				 state + (uint64_t)L->gc_permanent_generation : 0,
				 err);
		if (ret == 0)
			ret = py_field_u64(py, interp, L->is_next, &interp, err);
		ret = ret < 0 ? ret : 0;
	}
	addrmap_release(&seen);
	return ret;
}
