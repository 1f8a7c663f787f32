/*
 * Which of the tasks a task awaits it waits for the first of (the
 * wait-for graph's "any" edges, readers/waitgraph.h): asyncio.wait()'s
 * FIRST_COMPLETED and as_completed(), read off the task's frames of
 * asyncio/tasks.py.
 */
#include "readers/waitgraph_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

/* waits_for_first()'s answers. */
enum { FIRST_OF_NONE, FIRST_OF_ALL, FIRST_OF_SET };

/* Futures of one set a task waits for the first of, read at most. */
#define FIRST_OF_MAX 65536

/* The items of the set v into b->first_of_set: FIRST_OF_SET, or
 * FIRST_OF_NONE when v is no collection. */
static int first_of_items(struct wg_build *b, uint64_t v)
{
	uint64_t *items = xcalloc(FIRST_OF_MAX, sizeof(*items));
	size_t n = wg_collection_items(b->py, v, items, FIRST_OF_MAX), i;

	for (i = 0; i < n; i++)
		addrmap_put(&b->first_of_set, items[i], NULL);
	free(items);
	return n ? FIRST_OF_SET : FIRST_OF_NONE;
}

/* What asyncio's frame f (tasks.py) waits for the first of. */
static int first_of_frame(struct wg_build *b, const struct py_frame *f)
{
	const char *name = f->code->name, *how;
	uint64_t self;

	/* asyncio.wait(FIRST_COMPLETED): the futures of its `fs` */
	if (!strcmp(name, "_wait")) {
		how = py_frame_local_str(b->py, f, "return_when");
		return how && !strcmp(how, "FIRST_COMPLETED") ?
		       first_of_items(b, py_frame_local(b->py, f, "fs")) :
		       FIRST_OF_NONE;
	}
	if (strcmp(name, "_wait_for_one"))
		return FIRST_OF_NONE;
	/* as_completed(): 3.13's iterator keeps those not done in _todo;
	 * before, only the callbacks' closures have them: every task it
	 * awaits, then. */
	self = py_frame_local(b->py, f, "self");
	return self ? first_of_items(b, pyobj_lookup_or_0(b->py, self, "_todo")) :
	       FIRST_OF_ALL;
}

/*
 * Does task t go on after the first of several it awaits ends: in
 * asyncio.wait() with return_when FIRST_COMPLETED (its _wait), or in
 * as_completed() (its _wait_for_one, 3.6 - 3.14)?  FIRST_OF_SET: of
 * those in b->first_of_set (a TaskGroup's child that the same task
 * awaits is no choice); FIRST_OF_ALL: of each.
 */
static int waits_for_first(struct wg_build *b, const struct py_task *t)
{
	const struct py_async *a = b->a;
	size_t k;

	if (t == b->first_of)
		return b->first_of_says;
	b->first_of = t;
	b->first_of_says = FIRST_OF_NONE;
	addrmap_release(&b->first_of_set);
	addrmap_init(&b->first_of_set);
	for (k = 0; k < t->nstack && k < WG_MAX_FRAMES &&
		    b->first_of_says == FIRST_OF_NONE; k++) {
		const struct py_gen *gen = t->stack[k] < a->ngens ?
					   &a->gens[t->stack[k]] : NULL;
		const struct py_code *code = gen && gen->has_frame ?
					     gen->frame.code : NULL;

		if (code && code->name && code->filename &&
		    cs_ends_with(code->filename, "/asyncio/tasks.py"))
			b->first_of_says = first_of_frame(b, &gen->frame);
	}
	return b->first_of_says;
}

size_t wg_first_of(struct wg_build *b, const struct py_task *t,
		   uint64_t addr)
{
	int found;

	switch (waits_for_first(b, t)) {
	case FIRST_OF_ALL:
		return 1;
	case FIRST_OF_SET:
		addrmap_get(&b->first_of_set, addr, &found);
		return found ? b->first_of_set.len + 1 : 0;
	default:
		return 0;
	}
}
