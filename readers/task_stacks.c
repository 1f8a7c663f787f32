#include "readers/tasks_internal.h"

#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/gens.h"
#include "readers/task_alike.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* In next[]: not looked up yet (or not a generator the walk found). */
#define NEXT_UNKNOWN (-2)

/*
 * For every generator, the index of the generator it awaits (-1: none),
 * looked up in one pass before any chain is followed: the lookups are
 * independent, and the map's slots are prefetched a few generators
 * ahead, so that with 100,000 tasks the cache misses overlap.
 */
static void index_awaiting(struct builder *b)
{
	struct py_async *a = b->out;
	size_t i, n = a->ngens;

	b->next = xmalloc((n ? n : 1) * sizeof(*b->next));
	b->nnext = n;
	for (i = 0; i < n; i++) {
		uint64_t at = a->gens[i].awaiting;
		uintptr_t k;

		if (i + PREFETCH_AHEAD < n)
			addrmap_prefetch(&a->gen_index,
					 a->gens[i + PREFETCH_AHEAD].awaiting);
		k = at ? (uintptr_t)addrmap_get(&a->gen_index, at, NULL) : 0;
		if (!k && at) {   /* not a generator: what it wraps */
			at = py_gen_unwrap(b->py, &a->gens[i]);
			k = at ? (uintptr_t)addrmap_get(&a->gen_index, at,
							NULL) : 0;
		}
		b->next[i] = k ? (long)k - 1 : at ? NEXT_UNKNOWN : -1;
	}
}

/* The generator that generator idx awaits, or -1. */
static long next_gen(struct builder *b, size_t idx)
{
	long k;

	if (idx < b->nnext && b->next[idx] != NEXT_UNKNOWN)
		return b->next[idx];
	/* Not one the walk listed: read it (gen_at may append it). */
	k = tasks_gen_at(b, b->out->gens[idx].awaiting, b->out->gens[idx].interp_id);
	if (idx < b->nnext)
		b->next[idx] = k;
	return k;
}

void py_chain_seen_init(struct py_chain_seen *s)
{
	s->n = 0;
	addrmap_init(&s->set);
}

int py_chain_seen_add(struct py_chain_seen *s, long idx)
{
	size_t i;

	if (s->n < PY_CHAIN_SCAN) {
		for (i = 0; i < s->n; i++)
			if (s->first[i] == idx)
				return 0;
		s->first[s->n++] = idx;
		return 1;
	}
	for (i = 0; s->n == PY_CHAIN_SCAN && i < PY_CHAIN_SCAN; i++)
		addrmap_add(&s->set, (uint64_t)s->first[i] + 1);
	s->n = PY_CHAIN_SCAN + 1;
	return addrmap_add(&s->set, (uint64_t)idx + 1);
}

void py_chain_seen_release(struct py_chain_seen *s)
{
	addrmap_release(&s->set);
}

/* Generator frames by address, for the running chains. */
static void build_frame_gens(struct builder *b)
{
	const struct py_async *a = b->out;
	size_t i;

	b->frame_gens_built = 1;
	for (i = 0; i < a->ngens; i++)
		if (a->gens[i].has_frame && a->gens[i].frame.addr)
			addrmap_put(&b->frame_gens, a->gens[i].frame.addr,
				    (void *)(uintptr_t)(i + 1));
}

/* Does th wait for events in loop itself (struct py_task.loop_waits)? */
static int waits_in_loop(struct builder *b, const struct py_thread *th,
			 uint64_t loop)
{
	return loop && py_thread_in_loop_select(th) &&
	       py_frame_local(b->py, &th->frames[1], "self") == loop;
}

/* Append to chain the generators whose frames run inside the frame of
 * its last (running) member, as the thread stacks show them. */
static void extend_running(struct builder *b, struct py_task *t,
			   size_t **chain, size_t *n, size_t *alloc)
{
	struct py_async *a = b->out;
	uint64_t frame = a->gens[(*chain)[*n - 1]].frame.addr;
	size_t i, k, j;

	if (!a->gens[(*chain)[*n - 1]].has_frame || !frame)
		return;
	if (!b->frame_gens_built)
		build_frame_gens(b);
	for (i = 0; i < b->snap->nthreads; i++) {
		const struct py_thread *th = &b->snap->threads[i];

		for (k = 0; k < th->nframes && th->frames[k].addr != frame; k++)
			;
		if (k == th->nframes)
			continue;
		/* frames are innermost first: walk inward from k */
		t->run_at = k + 1;
		t->loop_waits = waits_in_loop(b, th, t->loop);
		for (j = k; j-- > 0 && *n < PY_MAX_CHAIN;) {
			uintptr_t gi = (uintptr_t)addrmap_get(&b->frame_gens,
							      th->frames[j].addr, NULL);

			if (!gi)
				break;  /* a plain call: the await chain ends */
			t->run_at = j + 1;
			*chain = xgrow(*chain, alloc, *n + 1, sizeof(**chain));
			(*chain)[(*n)++] = gi - 1;
			if (!a->gens[gi - 1].task)
				py_async_set_owner(a, gi - 1, t->addr);
		}
		return;
	}
}

/* Follow the await chain from the task's coroutine (generator first)
 * down. */
static void build_stack(struct builder *b, struct py_task *t, long first)
{
	struct py_async *a = b->out;
	size_t n = 0, i;
	struct py_chain_seen seen;
	long idx = first;

	py_chain_seen_init(&seen);
	/* (stops at a loop: a generator met twice) */
	while (idx >= 0 && n < PY_MAX_CHAIN && py_chain_seen_add(&seen, idx)) {
		b->chain = xgrow(b->chain, &b->chain_alloc, n + 1,
				 sizeof(*b->chain));
		b->chain[n++] = (size_t)idx;
		if (!a->gens[idx].task)
			py_async_set_owner(a, (size_t)idx, t->addr);
		idx = next_gen(b, (size_t)idx);
	}
	a->chains_cut += idx >= 0 && n == PY_MAX_CHAIN;
	py_chain_seen_release(&seen);
	/* A running coroutine reports no delegate: what it awaits is on
	 * its thread's stack, frame by frame, inside its own frame. */
	if (n && a->gens[b->chain[n - 1]].state == PY_GEN_RUNNING)
		extend_running(b, t, &b->chain, &n, &b->chain_alloc);
	if (n && a->gens[b->chain[0]].state == PY_GEN_RUNNING)
		t->running = 1;
	/* innermost first */
	t->stack = arena_allocarray(&a->pool, n, sizeof(*t->stack));
	for (i = 0; i < n; i++)
		t->stack[i] = b->chain[n - 1 - i];
	t->nstack = n;
}

/*
 * A task's coroutine that is no generator: an object of a class that
 * implements the coroutine protocol around a coroutine (aiohttp's
 * session.get() returns one, and asyncio.ensure_future() takes it).
 * Its send() drives the coroutine it wraps, whose chain is the task's.
 * That one is found in the attribute aiohttp and most wrappers keep it
 * in, for every such task first; then, for the others, as the only
 * chain no task owns whose innermost generator awaits the future the
 * task waits on.
 */
#define WRAPPED_ATTR "_coro"
/* In ends_at: a future two unowned chains await (which one is not known). */
#define ENDS_MANY ((void *)(uintptr_t)-1)

/* The generator whose next is idx, or -1 (-2 for more than one), for
 * every generator. */
static long *awaited_by_index(const struct builder *b)
{
	long *up = xmallocarray(b->nnext ? b->nnext : 1, sizeof(*up));
	size_t i;

	for (i = 0; i < b->nnext; i++)
		up[i] = -1;
	for (i = 0; i < b->nnext; i++) {
		long k = b->next[i];

		if (k >= 0 && (size_t)k < b->nnext)
			up[k] = up[k] == -1 ? (long)i : -2;
	}
	return up;
}

/* The outermost of the chain innermost ends, or -1; bounded, as a loop
 * (owned by no task) may have no outermost at all. */
static long outermost(const long *up, long innermost)
{
	long k = innermost;
	size_t n;

	for (n = 0; k >= 0 && n < PY_MAX_CHAIN; n++) {
		if (up[k] < 0)
			return up[k] == -1 ? k : -1;
		k = up[k];
	}
	return -1;
}

/* Each future an unowned chain's innermost generator awaits -> that
 * generator + 1, or ENDS_MANY. */
static void index_chain_ends(const struct builder *b, struct addrmap *ends_at)
{
	const struct py_async *a = b->out;
	size_t i;
	int found;

	for (i = 0; i < b->nnext; i++) {
		uint64_t w = a->gens[i].awaiting;

		if (a->gens[i].task || b->next[i] >= 0 || !w)
			continue;
		addrmap_get(ends_at, w, &found);
		addrmap_put(ends_at, w, found ? ENDS_MANY :
			    (void *)(uintptr_t)(i + 1));
	}
}

void tasks_build_stacks(struct builder *b)
{
	struct py_async *a = b->out;
	struct addrmap ends_at;
	long *up = NULL;
	size_t i, rebuilt = 0;
	int pass;

	index_awaiting(b);
	for (i = 0; i < a->ntasks; i++) {
		build_stack(b, &a->tasks[i], b->fields[i].coro_gen);
		py_task_note_frames_like(a, &a->tasks[i],
					 i ? &a->tasks[i - 1] : NULL);
	}
	/* Once every other task owns its chain: what none owns is left.
	 * The wrappers that name their coroutine first, then the rest. */
	addrmap_init(&ends_at);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->ntasks; i++) {
			struct py_task *t = &a->tasks[i];
			uint64_t inner;
			long k = -1;
			void *v;

			if (b->fields[i].coro_gen >= 0 || !t->coro || t->nstack)
				continue;
			if (pass == 0) {
				inner = pyobj_own_or_0(b->py, t->coro,
						       WRAPPED_ATTR);
				k = inner ? tasks_gen_at(b, inner,
							 t->interp_id) : -1;
			} else if (t->waiter) {
				if (!up) {
					up = awaited_by_index(b);
					index_chain_ends(b, &ends_at);
				}
				v = addrmap_get(&ends_at, t->waiter, NULL);
				if (v && v != ENDS_MANY)
					k = outermost(up, (long)(uintptr_t)v - 1);
			}
			/* (never a chain another task took meanwhile) */
			if (k < 0 || a->gens[k].task)
				continue;
			build_stack(b, t, k);
			rebuilt += t->nstack > 0;
		}
	}
	addrmap_release(&ends_at);
	free(up);
	/* (alike as its neighbours were while its stack was empty) */
	for (i = 0; rebuilt && i < a->ntasks; i++)
		py_task_note_frames_like(a, &a->tasks[i],
					 i ? &a->tasks[i - 1] : NULL);
}
