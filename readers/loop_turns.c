/*
 * How many callbacks an asyncio loop took off its ready queue: see
 * readers/loop_turns.h.
 */
#include "readers/loop_turns.h"

#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/hash.h"
#include "common/banned.h"

/* Words of a loop in C looked at for its ready queue, at most. */
#define C_LOOP_WORDS 64

static int is_deque(struct pyproc *py, uint64_t obj, uint64_t deque)
{
	uint64_t type;
	struct cs_err err;

	cs_err_init(&err);
	return obj && !(obj & 7) && pyobj_read_type(py, obj, &type, &err) == 0 &&
	       type == deque;
}

/* A loop in C (uvloop's Loop, a Cython class) keeps its ready queue in
 * a field of its own, found as the one deque among the object's first
 * words (within its size); 0 when there is not exactly one. */
static uint64_t c_loop_ready(struct pyproc *py, uint64_t loop, uint64_t deque)
{
	const struct py_layout *L = &py->layout;
	uint64_t words[C_LOOP_WORDS], type, size, found = 0;
	size_t n = C_LOOP_WORDS, i;
	struct cs_err err;

	cs_err_init(&err);
	if (L->tp_basicsize < 0 || pyobj_read_type(py, loop, &type, &err) < 0 ||
	    py_field_u64(py, type, L->tp_basicsize, &size, &err) < 0)
		return 0;
	if (size / 8 < n)
		n = (size_t)(size / 8);
	if (n < 3 || py_read_words(py, loop, words, n, &err) < 0)
		return 0;
	/* (past the object's head: its refcount and type) */
	for (i = 2; i < n; i++) {
		if (!is_deque(py, words[i], deque))
			continue;
		if (found && found != words[i])
			return 0;
		found = words[i];
	}
	return found;
}

uint64_t py_loop_turn_mark(struct pyproc *py, uint64_t loop)
{
	const struct py_layout *L = &py->layout;
	uint64_t ready = 0, deque, state, size, h;
	struct cs_err err;

	/* (the type itself: a program may rebind collections.deque, and
	 * its loops' queues are then whatever that is) */
	if (!loop || L->deque_state < 0 || L->ob_size < 0 ||
	    !(deque = py_module_attr(py, "_collections", "deque")))
		return 0;
	cs_err_init(&err);
	/* (a subclass of deque would do as well; nothing makes one) */
	if (pyobj_get_attr(py, loop, "_ready", &ready, &err) != 0)
		ready = c_loop_ready(py, loop, deque);
	if (!is_deque(py, ready, deque) ||
	    py_field_u64(py, ready, L->deque_state, &state, &err) < 0 ||
	    py_field_u64(py, ready, L->ob_size, &size, &err) < 0)
		return 0;
	h = cs_fnv_u64(CS_FNV_START, state - size);
	return h ? h : 1;
}
