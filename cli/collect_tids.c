/*
 * Thread ids of the Python threads (cli/collect_tids.h).
 */
#include "cli/collect_tids.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/addrmap.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* ms->threads' index + 1 by tid (by_ns: by namespace tid), the first
 * of each: thousands of threads each looked up by a scan of all the
 * others made the stop's every collection quadratic. */
static void index_threads(const struct memsrc *ms, int by_ns,
			  struct addrmap *out)
{
	size_t k;

	addrmap_init(out);
	addrmap_reserve(out, ms->nthreads);
	for (k = 0; k < ms->nthreads; k++) {
		int tid = by_ns ? ms->threads[k].ns_tid : ms->threads[k].tid;

		if (tid > 0 && !addrmap_get(out, (uint64_t)tid, NULL))
			addrmap_put(out, (uint64_t)tid,
				    (void *)(uintptr_t)(k + 1));
	}
}

static int snap_has_tid(const struct py_snapshot *snap, int tid)
{
	size_t i;

	for (i = 0; i < snap->nthreads; i++)
		if (snap->threads[i].tid == tid)
			return 1;
	return 0;
}

/*
 * The main thread exited (pthread_exit()) while the process runs on: the
 * kernel keeps it as a zombie, which has no registers to tell its
 * pthread_t by, and before 3.11 CPython does not record the tid (from
 * 3.11 it does, and nothing is guessed).  Every live thread was stopped
 * and matched by its registers (or, left running, matched otherwise), so
 * a started Python thread (one with a pthread_t) with no tid is one
 * whose thread has exited; when there is one such thread, the exited
 * main thread is the kernel's only one and no Python thread has its tid
 * yet, they are the same.
 */
static void match_exited_main(struct collection *c)
{
	const struct memsrc *ms = c->ms;
	struct py_thread *lone = NULL;
	size_t i, exited = 0, untold = 0;
	int tid = 0;

	if (c->py.layout.ts_native_thread_id >= 0)
		return;
	for (i = 0; i < ms->nthreads; i++) {
		if (ms->threads[i].exited) {
			exited++;
			tid = ms->threads[i].tid;
		} else if (ms->threads[i].left_running) {
			/* (not matched by its registers: known only if its
			 * Python thread found it otherwise) */
			if (!snap_has_tid(&c->snap, ms->threads[i].tid))
				return;
		} else if (!ms->threads[i].has_fs_base) {
			return;   /* not every live thread is known */
		}
	}
	for (i = 0; i < c->snap.nthreads; i++) {
		const struct py_thread *t = &c->snap.threads[i];

		if (t->tid == tid)
			return;
		if (t->tid <= 0 && t->thread_id) {
			lone = &c->snap.threads[i];
			untold++;
		}
	}
	if (exited == 1 && untold == 1 && tid > 0)
		lone->tid = tid;
}

/*
 * Thread ids as coroscope sees them.  CPython records the tid its
 * thread got from gettid(), which in another PID namespace is that
 * namespace's (1, 2, ...); the source's thread list has both.  An id
 * that is one of the target's tids as we see them is kept (it came from
 * a thread's registers); one that is only a namespace tid is mapped.
 */
void collect_map_thread_ids(struct collection *c)
{
	const struct memsrc *ms = c->ms;
	struct addrmap by_tid, by_ns;
	size_t i;

	if (!c->snap.nthreads)
		return;
	match_exited_main(c);
	c->ns_tids = xcalloc(c->snap.nthreads, sizeof(*c->ns_tids));
	index_threads(ms, 0, &by_tid);
	index_threads(ms, 1, &by_ns);
	for (i = 0; i < c->snap.nthreads; i++) {
		struct py_thread *t = &c->snap.threads[i];
		size_t k;

		if (t->tid <= 0)
			continue;
		k = (uintptr_t)addrmap_get(&by_tid, (uint64_t)t->tid, NULL);
		if (!k) {
			k = (uintptr_t)addrmap_get(&by_ns, (uint64_t)t->tid,
						   NULL);
			if (k)
				t->tid = ms->threads[k - 1].tid;
		}
		if (k) {
			c->ns_tids[i] = ms->threads[k - 1].ns_tid;
			t->exited = ms->threads[k - 1].exited;
		}
	}
	addrmap_release(&by_tid);
	addrmap_release(&by_ns);
}
