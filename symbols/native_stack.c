#include "symbols/native_stack.h"

#include <stdlib.h>
#include <string.h>

#include "symbols/unwind.h"
#include "common/strbuf.h"
#include "common/banned.h"

static void thread_take(struct native_thread *nt, const struct cs_thread *t,
			struct native_unwinder *u,
			struct native_symbolizer *sym, struct native_pc *pcs)
{
	struct native_sym syms[NATIVE_MAX_INLINED];
	size_t n, i, k, alloc = 0;

	nt->tid = t->tid;
	nt->has_regs = t->has_regs;
	nt->left_running = t->left_running;
	n = native_unwind(u, t, pcs, NATIVE_MAX_FRAMES);
	for (i = 0; i < n; i++) {
		size_t ns = native_symbolize(sym, pcs[i].pc, pcs[i].exact, syms,
					     NATIVE_MAX_INLINED);

		nt->frames = xgrow(nt->frames, &alloc, nt->nframes + ns,
				   sizeof(*nt->frames));
		for (k = 0; k < ns; k++) {
			struct native_frame *f = &nt->frames[nt->nframes++];

			f->pc = pcs[i].pc;
			f->sym = syms[k];
			f->signal = pcs[i].signal && k == ns - 1;
		}
	}
}

/*
 * The symbolizer of the last stacks released, kept for the next take
 * when it fits that target (native_symbolizer_fits()): the next sample
 * of `watch` or `run`, the pass a capture plan is learnt from and the
 * one after it.  One at a time, on the thread that takes the stacks.
 */
static struct native_symbolizer *parked;

static int symbolizer_for(struct native_symbolizer **s, struct memsrc *ms,
			  struct cs_err *err)
{
	if (parked && native_symbolizer_fits(parked, ms) &&
	    native_symbolizer_rebind(parked, ms) == 0) {
		*s = parked;
		parked = NULL;
		return 0;
	}
	native_symbolizer_free(parked);
	parked = NULL;
	return native_symbolizer_new(s, ms, err);
}

static int by_tid_cmp(const void *a, const void *b)
{
	const struct native_tid_index *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

void native_stacks_index(struct native_stacks *ns)
{
	size_t i;

	free(ns->by_tid);
	ns->by_tid = xcalloc(ns->nthreads ? ns->nthreads : 1,
			     sizeof(*ns->by_tid));
	for (i = 0; i < ns->nthreads; i++) {
		ns->by_tid[i].tid = ns->threads[i].tid;
		ns->by_tid[i].at = i;
	}
	qsort(ns->by_tid, ns->nthreads, sizeof(*ns->by_tid), by_tid_cmp);
}

int native_stacks_take(struct native_stacks *ns, struct memsrc *ms,
		       struct cs_err *err)
{
	struct native_unwinder *u;
	struct native_pc *pcs;
	size_t i;
	int ret;

	memset(ns, 0, sizeof(*ns));
	ret = native_unwinder_new(&u, ms, err);
	if (ret < 0)
		return ret;
	ret = symbolizer_for(&ns->sym, ms, err);
	if (ret < 0) {
		native_unwinder_free(u);
		return ret;
	}
	pcs = xcalloc(NATIVE_MAX_FRAMES, sizeof(*pcs));
	ns->threads = xcalloc(ms->nthreads ? ms->nthreads : 1,
			      sizeof(*ns->threads));
	ns->nthreads = ms->nthreads;
	for (i = 0; i < ms->nthreads; i++)
		thread_take(&ns->threads[i], &ms->threads[i], u, ns->sym, pcs);
	free(pcs);
	native_unwinder_free(u);
	native_stacks_index(ns);
	return 0;
}

void native_stacks_release(struct native_stacks *ns)
{
	size_t i;

	for (i = 0; i < ns->nthreads; i++)
		free(ns->threads[i].frames);
	free(ns->threads);
	free(ns->by_tid);
	if (ns->sym) {
		native_symbolizer_free(parked);
		parked = ns->sym;
	}
	memset(ns, 0, sizeof(*ns));
}

const struct native_thread *native_stacks_find(const struct native_stacks *ns,
					       int tid)
{
	size_t lo = 0, hi = ns->nthreads, i;

	if (!ns->by_tid) {
		for (i = 0; i < ns->nthreads; i++)
			if (ns->threads[i].tid == tid)
				return &ns->threads[i];
		return NULL;
	}
	/* The first entry of tid or above, in [lo, hi). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ns->by_tid[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ns->nthreads && ns->by_tid[lo].tid == tid ?
	       &ns->threads[ns->by_tid[lo].at] : NULL;
}
