#include "readers/task_alike.h"

#include <string.h>

#include "common/banned.h"

/* The same frame: code object, line and name.  (Generators read on the
 * second thread share the code objects, adopted, but not the names: its
 * strings are cached apart.) */
static int same_frame(const struct py_gen *g, const struct py_gen *h)
{
	if (g->has_frame != h->has_frame)
		return 0;
	return !g->has_frame ||
	       (g->frame.line == h->frame.line &&
		g->frame.code == h->frame.code &&
		(g->qualname == h->qualname ||
		 (g->qualname && h->qualname &&
		  !strcmp(g->qualname, h->qualname))));
}

void py_task_note_frames_like(const struct py_async *a, struct py_task *t,
			      const struct py_task *before)
{
	size_t i;

	t->frames_like = (size_t)(t - a->tasks) + 1;
	if (!before || before->nstack != t->nstack)
		return;
	for (i = 0; i < t->nstack; i++)
		if (!same_frame(&a->gens[t->stack[i]],
				&a->gens[before->stack[i]]))
			return;
	t->frames_like = before->frames_like;
}
