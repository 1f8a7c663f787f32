#include "cli/run_idle_items.h"

#include <string.h>

#include "cli/thread_idle.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"


void run_idle_items_init(struct idle_items *w,
			      const struct collection *c,
			      const struct collection *parent)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	w->c = c;
	addrmap_init(&w->by_tid);
	addrmap_init(&w->parent_gens);
	for (i = 0; i < c->snap.nthreads; i++)
		if (c->snap.threads[i].tid > 0)
			addrmap_put(&w->by_tid,
				    (uint64_t)c->snap.threads[i].tid,
				    (void *)(uintptr_t)(i + 1));
	if (!parent || !py_snapshot_forked_child(&c->snap))
		return;
	w->parent = parent;
	for (i = 0; i < parent->async.ngens; i++)
		addrmap_put(&w->parent_gens, parent->async.gens[i].addr,
			    (void *)(uintptr_t)(i + 1));
}

/* A generator of a forked child that its parent has too, at the same
 * address, of the same code: a copy the fork made (a
 * ProcessPoolExecutor's map(), copied into each worker), not the
 * child's. */
static int copied_from_parent(const struct idle_items *w,
			      const struct watch_item *it)
{
	uintptr_t i;

	if (!w->parent || it->kind != WATCH_GENERATOR)
		return 0;
	i = (uintptr_t)addrmap_get(&w->parent_gens, it->id, NULL);
	return i && cs_str_eq(w->parent->async.gens[i - 1].qualname,
			      it->name);
}

/* What item it is, if idle by design: a thread as the dump found it
 * (cli/thread_idle.h), a task or generator as the last sample did
 * (cli/sched_idle.h); NULL otherwise. */
const char *run_idle_reason(const struct idle_items *w,
			    const struct watch_item *it)
{
	uintptr_t i;

	if (copied_from_parent(w, it))
		return "a copy of its parent's, made by the fork";
	if (it->kind != WATCH_THREAD)
		return it->gone ? NULL : it->idle;
	i = (uintptr_t)addrmap_get(&w->by_tid, it->id, NULL);
	return i ? thread_idle_by_design(&w->c->snap.threads[i - 1]) : NULL;
}

/* Is item it a thread idle by design?  Counted if so. */
int run_idle_item(struct idle_items *w, const struct watch_item *it)
{
	const char *what = run_idle_reason(w, it);
	size_t k;

	if (!what)
		return 0;
	w->n++;
	w->nthreads += it->kind == WATCH_THREAD;
	for (k = 0; k < w->nkinds && strcmp(w->kinds[k], what); k++)
		;
	if (k == w->nkinds && k < IDLE_KINDS)
		w->kinds[w->nkinds++] = what;
	if (k < IDLE_KINDS)
		w->count[k]++;
	return 1;
}

/* "3 threads idle by design, not listed: a multiprocessing pool's
 * handler thread (3)"; "3 idle by design, not listed: trio's system task
 * (2), trio's run loop (1)" when not all are threads; 0 when there are
 * none. */
int run_idle_items_line(const struct idle_items *w, struct strbuf *sb)
{
	size_t k;

	if (!w->n)
		return 0;
	if (w->nthreads == w->n)
		strbuf_addf(sb, "%zu thread%s idle by design, not listed: ",
			    w->n, w->n == 1 ? "" : "s");
	else
		strbuf_addf(sb, "%zu idle by design, not listed: ", w->n);
	for (k = 0; k < w->nkinds; k++)
		strbuf_addf(sb, "%s%s (%zu)", k ? ", " : "", w->kinds[k],
			    w->count[k]);
	return 1;
}

void run_idle_items_release(struct idle_items *w)
{
	addrmap_release(&w->by_tid);
	addrmap_release(&w->parent_gens);
}

/* The dumped parent of process pid in d, or NULL. */
const struct collection *run_dumped_parent_of(const struct run_dump *d,
						 int pid)
{
	size_t i, j;

	for (i = 0; i < d->n; i++) {
		if (d->procs[i].e.pid != pid)
			continue;
		for (j = 0; j < d->n; j++)
			if (d->procs[j].e.pid == d->procs[i].e.ppid &&
			    d->procs[j].dumped)
				return &d->procs[j].c;
		break;
	}
	return NULL;
}

