#include "cli/task_kind.h"


#include "common/util.h"
#include "common/banned.h"

int task_same_kind(const struct py_async *a, const struct py_task *x,
		   const struct py_task *y)
{
	size_t i;

	if (x->nstack != y->nstack || x->running != y->running ||
	    !cs_str_eq(x->framework, y->framework) ||
	    !x->waiter != !y->waiter ||
	    !py_async_task(a, x->waiter) != !py_async_task(a, y->waiter) ||
	    !cs_str_eq(x->waiter_type, y->waiter_type) ||
	    /* (one cancelled and going on stands apart) */
	    (x->cancels_requested > 0) != (y->cancels_requested > 0))
		return 0;
	/* Found alike while the stacks were built (the same code objects):
	 * no generator need be read again (5 per task, from all over a
	 * 6 MB array at 10k tasks). */
	if (x->frames_like && x->frames_like == y->frames_like)
		return 1;
	for (i = 0; i < x->nstack; i++) {
		const struct py_gen *g = &a->gens[x->stack[i]];
		const struct py_gen *h = &a->gens[y->stack[i]];

		if (g->has_frame != h->has_frame)
			return 0;
		if (!g->has_frame)
			continue;
		if (g->frame.line != h->frame.line ||
		    !cs_str_eq(g->frame.code->filename, h->frame.code->filename) ||
		    !cs_str_eq(g->qualname, h->qualname))
			return 0;
	}
	return 1;
}

/* FNV-1a over s's bytes and a terminator, from h. */
static uint64_t hash_str(struct task_kind_memo *m, uint64_t h, const char *s)
{
	struct task_kind_step *st =
		&m->step[((h ^ (uintptr_t)s) * 0x9E3779B97F4A7C15ull) >>
			 (64 - TASK_KIND_MEMO_BITS)];
	const char *p;
	uint64_t in = h;

	if (s && st->s == s && st->h == in)
		return st->out;
	for (p = s; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	if (s) {
		st->h = in;
		st->s = s;
		st->out = h;
	}
	return h;
}

uint64_t task_kind_hash(struct task_kind_memo *m, const struct py_async *a,
			const struct py_task *x)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	h = hash_str(m, h, x->waiter_type);
	h = (h ^ (uint64_t)x->running) * 0x100000001b3ull;
	h = (h ^ (uint64_t)(x->cancels_requested > 0)) * 0x100000001b3ull;
	for (i = 0; i < x->nstack; i++) {
		const struct py_gen *g = &a->gens[x->stack[i]];

		if (!g->has_frame)
			continue;
		h = hash_str(m, h, g->qualname);
		h = (h ^ (uint64_t)(unsigned)g->frame.line) * 0x100000001b3ull;
	}
	return h | 1;
}
