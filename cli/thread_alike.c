#include "cli/thread_alike.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/hash.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/native_merge.h"
#include "common/banned.h"

/* One thread as the report shows it. */
struct shown {
	const struct py_thread *t;        /* NULL: no Python thread state */
	const struct native_thread *nt;   /* NULL: none, or not asked */
	struct merged_frame *merged;      /* with native stacks */
	size_t nmerged;
};

static uint64_t thread_hash(const struct py_thread *t)
{
	uint64_t h = cs_fnv_u64(CS_FNV_START, t->interp);
	size_t i;

	h = cs_fnv_u64(cs_fnv_u64(h, t->nframes), t->omitted);
	h = cs_fnv_u64(h, ((uint64_t)t->omitted_at << 8) |
			  ((uint64_t)(unsigned)t->truncated << 2) |
			  (uint64_t)(unsigned)(t->holds_gil + 1));
	for (i = 0; i < t->nframes; i++)
		h = cs_fnv_u64(cs_fnv_u64(h, (uint64_t)(uintptr_t)
					     t->frames[i].code),
			       (uint64_t)(int64_t)t->frames[i].line);
	return h;
}

static int same_thread(const struct py_thread *a, const struct py_thread *b)
{
	return a->interp == b->interp && a->nframes == b->nframes &&
	       a->omitted == b->omitted && a->omitted_at == b->omitted_at &&
	       a->truncated == b->truncated && a->holds_gil == b->holds_gil &&
	       py_frames_same_places(a->frames, b->frames, a->nframes);
}

/* What the report prints of a C frame (cli/report_native.c). */
static uint64_t native_frame_hash(uint64_t h, const struct native_frame *f)
{
	const struct native_sym *s = &f->sym;

	h = cs_fnv_str(h, s->function);
	if (s->file)
		h = cs_fnv_u64(cs_fnv_str(h, s->file), (uint64_t)(int64_t)s->line);
	else if (s->library)
		h = cs_fnv_u64(cs_fnv_str(h, cs_base_name(s->library)),
			       s->offset);
	else
		h = cs_fnv_u64(h, f->pc);
	return cs_fnv_u64(h, ((uint64_t)(unsigned)s->inlined << 1) |
			     (uint64_t)(unsigned)f->signal);
}

static int same_native_frame(const struct native_frame *a,
			     const struct native_frame *b)
{
	const struct native_sym *x = &a->sym, *y = &b->sym;

	if (!cs_str_eq(x->function, y->function) || x->inlined != y->inlined ||
	    a->signal != b->signal || !x->file != !y->file ||
	    !x->library != !y->library)
		return 0;
	if (x->file)
		return cs_str_eq(x->file, y->file) && x->line == y->line;
	if (x->library)
		return x->offset == y->offset &&
		       cs_str_eq(cs_base_name(x->library), cs_base_name(y->library));
	return a->pc == b->pc;
}

/* The marks the report prints from the C stack: what the thread is
 * blocked in, whether it was read at all, whether it has frames. */
static uint64_t native_marks(const struct native_thread *nt)
{
	return !nt ? 1 : ((uint64_t)(unsigned)nt->has_regs << 1) |
			 ((uint64_t)(nt->nframes != 0) << 2);
}

static uint64_t shown_hash(const struct shown *s, int native)
{
	uint64_t h = s->t ? thread_hash(s->t) : CS_FNV_START;
	size_t i;

	if (!native)
		return h;
	h = cs_fnv_str(cs_fnv_u64(h, native_marks(s->nt)),
		       native_blocked_in(s->nt));
	for (i = 0; i < s->nmerged; i++) {
		const struct merged_frame *m = &s->merged[i];

		if (m->py)
			h = cs_fnv_u64(h, 2);  /* hashed above */
		else
			h = native_frame_hash(h, m->native);
	}
	return h;
}

static int same_shown(const struct shown *a, const struct shown *b,
		      int native)
{
	size_t i;

	if (!a->t != !b->t || (a->t && !same_thread(a->t, b->t)))
		return 0;
	if (!native)
		return 1;
	if (native_marks(a->nt) != native_marks(b->nt) ||
	    !cs_str_eq(native_blocked_in(a->nt), native_blocked_in(b->nt)) ||
	    a->nmerged != b->nmerged)
		return 0;
	for (i = 0; i < a->nmerged; i++) {
		const struct merged_frame *x = &a->merged[i], *y = &b->merged[i];

		if (!x->py != !y->py)
			return 0;
		/* Python frames: compared by same_thread(), in order. */
		if (!x->py && !same_native_frame(x->native, y->native))
			return 0;
	}
	return 1;
}

struct slot {
	uint64_t hash;
	size_t first;      /* the group's first thread, + 1 (0: empty) */
};

/*
 * Group shown[0, n) (their merged stacks made; freed here), into first,
 * next and count as thread_alike() says.  A thread whose kernel id (tids)
 * is unknown is alike no other.
 */
static void group(struct shown *shown, const int *tids, size_t n, int native,
		  size_t *first, size_t *next, size_t *count)
{
	size_t cap = 16, mask, i, probes;
	size_t *last = xmallocarray(n ? n : 1, sizeof(*last));
	struct slot *table;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	table = xcalloc(cap, sizeof(*table));
	for (i = 0; i < n; i++) {
		struct shown *s = &shown[i];
		uint64_t h = shown_hash(s, native);
		size_t at = (size_t)h & mask;

		first[i] = i;
		next[i] = THREAD_ALIKE_END;
		last[i] = i;
		count[i] = 1;
		/* Bounded: the table is never more than half full. */
		for (probes = 0; tids[i] > 0 && probes < cap;
		     probes++, at = (at + 1) & mask) {
			struct slot *e = &table[at];
			size_t f;

			if (!e->first) {
				e->hash = h;
				e->first = i + 1;
				break;
			}
			f = e->first - 1;
			if (e->hash == h && same_shown(&shown[f], s, native)) {
				first[i] = f;
				next[last[f]] = i;
				last[f] = i;
				count[f]++;
				/* Only a group's first is compared again. */
				free(s->merged);
				s->merged = NULL;
				break;
			}
		}
	}
	for (i = 0; i < n; i++)
		free(shown[i].merged);
	free(last);
	free(table);
}

void thread_alike(const struct py_snapshot *snap,
		  const struct thread_alike_native *native,
		  const unsigned char *apart, size_t *first, size_t *next,
		  size_t *count)
{
	size_t n = snap->nthreads, i;
	struct shown *shown = xcalloc(n ? n : 1, sizeof(*shown));
	int *tids = xmallocarray(n ? n : 1, sizeof(*tids));

	for (i = 0; i < n; i++) {
		struct shown *s = &shown[i];

		s->t = &snap->threads[i];
		tids[i] = apart && apart[i] ? 0 : s->t->tid;
		if (native) {
			s->nt = s->t->tid > 0 ?
				native_stacks_find(native->stacks, s->t->tid) :
				NULL;
			native_merge(s->t, s->nt, native->interp, native->all,
				     &s->merged, &s->nmerged);
		}
	}
	group(shown, tids, n, native != NULL, first, next, count);
	free(shown);
	free(tids);
}

void thread_alike_native_only(const struct thread_alike_native *native,
			      const unsigned char *has_py, size_t *first,
			      size_t *next, size_t *count)
{
	size_t n = native->stacks->nthreads, i;
	struct shown *shown = xcalloc(n ? n : 1, sizeof(*shown));
	int *tids = xmallocarray(n ? n : 1, sizeof(*tids));

	for (i = 0; i < n; i++) {
		struct shown *s = &shown[i];

		s->nt = &native->stacks->threads[i];
		/* Those the Python threads' entries show: apart. */
		tids[i] = has_py[i] ? 0 : s->nt->tid;
		if (!has_py[i])
			native_merge(NULL, s->nt, native->interp, native->all,
				     &s->merged, &s->nmerged);
	}
	group(shown, tids, n, 1, first, next, count);
	free(shown);
	free(tids);
}
