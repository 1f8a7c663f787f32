#include "cli/thread_alike.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/strbuf.h"
#include "common/banned.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t stack_hash(const struct py_thread *t)
{
	uint64_t h = mix(mix(mix(t->interp, t->nframes), t->omitted),
			 ((uint64_t)t->omitted_at << 8) |
			 ((uint64_t)(unsigned)t->truncated << 2) |
			 (uint64_t)(unsigned)(t->holds_gil + 1));
	size_t i;

	for (i = 0; i < t->nframes; i++)
		h = mix(mix(h, (uint64_t)(uintptr_t)t->frames[i].code),
			(uint64_t)(int64_t)t->frames[i].line);
	return h;
}

static int same_stack(const struct py_thread *a, const struct py_thread *b)
{
	return a->interp == b->interp && a->nframes == b->nframes &&
	       a->omitted == b->omitted && a->omitted_at == b->omitted_at &&
	       a->truncated == b->truncated && a->holds_gil == b->holds_gil &&
	       py_frames_same_places(a->frames, b->frames, a->nframes);
}

struct slot {
	uint64_t hash;
	size_t first;      /* the group's first thread, + 1 (0: empty) */
};

void thread_alike(const struct py_snapshot *snap, size_t *first,
		  size_t *count)
{
	size_t n = snap->nthreads, cap = 16, mask, i, probes;
	struct slot *table;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	table = xcalloc(cap, sizeof(*table));
	for (i = 0; i < n; i++) {
		const struct py_thread *t = &snap->threads[i];
		uint64_t h = stack_hash(t);
		size_t at = (size_t)h & mask;

		first[i] = i;
		count[i] = 1;
		/* Bounded: the table is never more than half full. */
		for (probes = 0; probes < cap; probes++, at = (at + 1) & mask) {
			struct slot *s = &table[at];

			if (!s->first) {
				s->hash = h;
				s->first = i + 1;
				break;
			}
			if (s->hash == h &&
			    same_stack(&snap->threads[s->first - 1], t)) {
				first[i] = s->first - 1;
				count[first[i]]++;
				break;
			}
		}
	}
	free(table);
}
