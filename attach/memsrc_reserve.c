/*
 * The cache's memory faulted in ahead of a stop, so that the capture
 * during it waits for no page faults of coroscope's own: clearing 30 MB
 * of fresh pages takes 2.5-4 ms here, and much more where the host hands
 * the memory back only when it is touched (bench/README.md, "Fresh
 * memory").
 *
 * mcache_reserve_start() does it on a thread of its own: a 10k-task
 * dump reserves before finding the interpreter (its symbols, its
 * runtime), about a millisecond of the main thread's work that the
 * faults no longer wait behind.  The main thread's reads meanwhile fill
 * slab pages past the reserved ones (the stop starts the cache over from
 * its first page), and nothing may unmap the slabs while it runs: every
 * path to that waits first (mcache_reserve_wait()).
 *
 * Finding the interpreter takes less time than the faults, so a stop
 * used to wait ~2.7 ms for the thread with nothing to do: the waiting
 * thread now faults in pages too, taking huge-page-sized units from the
 * same counter (both cores clear pages; the wait halves).
 */
#include "attach/memsrc_cache.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common/jobs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

struct fill_range {
	unsigned char *mem;
	size_t pages;
};

struct cache_filler {
	struct cs_job *job;
	_Atomic int quit;           /* the pages are not wanted any more */
	struct fill_range *ranges;  /* its own copy: slabs[] may be
				       reallocated meanwhile */
	size_t n;
	/* The ranges cut into units of FILL_UNIT pages (a huge page's),
	 * numbered through all ranges; next is the first not taken. */
	size_t units;
	_Atomic size_t next;
};

#define FILL_UNIT ((size_t)512)

static size_t units_of(const struct fill_range *r)
{
	return (r->pages + FILL_UNIT - 1) / FILL_UNIT;
}

static void populate(const struct fill_range *r)
{
	size_t k;

	if (madvise(r->mem, r->pages * PAGE_SIZE, MADV_POPULATE_WRITE) == 0)
		return;
	/* Before Linux 5.14: touch each page instead (pages no fill has
	 * used yet: nothing else runs). */
	for (k = 0; k < r->pages; k++)
		r->mem[k * PAGE_SIZE] = 0;
}

/*
 * Slabs for `pages` pages counted from the start of the slabs (where a
 * cleared cache starts again), and the parts of them not yet faulted
 * in: one range per slab at most, into *out (the caller frees it).
 */
static size_t reserve_ranges(struct memsrc_cache *c, size_t pages,
			     struct fill_range **out)
{
	size_t at = 0, i, n = 0;

	mcache_slabs_cover(c, pages);
	*out = xmallocarray(c->nslabs ? c->nslabs : 1, sizeof(**out));
	for (i = 0; i < c->nslabs && at < pages; i++) {
		size_t lo = c->faulted > at ? c->faulted - at : 0;
		size_t hi = pages - at < c->slabs[i].pages ?
			    pages - at : c->slabs[i].pages;

		if (lo < hi) {
			(*out)[n].mem = c->slabs[i].mem + lo * PAGE_SIZE;
			(*out)[n].pages = hi - lo;
			n++;
		}
		at += c->slabs[i].pages;
	}
	return n;
}

static void reserved(struct memsrc_cache *c, size_t pages)
{
	if (pages > c->faulted)
		c->faulted = pages;
	(void)mcache_table_reserve(c, pages + SHARED_ROOM);
}

/*
 * Not MADV_POPULATE_WRITE: it holds the process's mmap lock for its
 * whole range, and every mmap() the main thread makes meanwhile (the
 * interpreter's ELF files, its own blocks) waited for it: finding the
 * interpreter took 3.7 ms instead of 1.  A write fault takes only its
 * mapping's lock.  Each page gets an atomic add of 0: a write that keeps
 * the page's bytes whatever they are.
 */
/* Fault in units not yet taken until none is left (or the pages are
 * not wanted any more); the number this caller did. */
static size_t fill_units(struct cache_filler *f)
{
	size_t i = 0, first = 0, u, k, lo, hi, done = 0;

	/* Bounded: each turn takes a unit, and there are f->units. */
	while (!atomic_load_explicit(&f->quit, memory_order_relaxed)) {
		u = atomic_fetch_add(&f->next, 1);
		if (u >= f->units)
			break;
		/* The range unit u lies in: units only grow, so the
		 * search goes on from the last one. */
		while (i < f->n && u >= first + units_of(&f->ranges[i]))
			first += units_of(&f->ranges[i++]);
		if (i == f->n)
			break;
		lo = (u - first) * FILL_UNIT;
		hi = lo + FILL_UNIT < f->ranges[i].pages ?
		     lo + FILL_UNIT : f->ranges[i].pages;
		for (k = lo; k < hi; k++)
			__atomic_fetch_add(f->ranges[i].mem + k * PAGE_SIZE,
					   0, __ATOMIC_RELAXED);
		done++;
	}
	return done;
}

static void *fill_run(void *arg)
{
	(void)fill_units(arg);
	return NULL;
}

/* mcache_reserve() and mcache_reserve_start(): on a thread of its own
 * with `ahead`, where it can. */
static void reserve(struct memsrc_cache *c, size_t pages, int ahead)
{
	struct cache_filler *f;
	struct fill_range *ranges;
	size_t n, i;

	mcache_reserve_wait(c);
	n = reserve_ranges(c, pages, &ranges);
	if (ahead && n && cs_cpus() >= 2) {
		f = xcalloc(1, sizeof(*f));
		f->ranges = ranges;
		f->n = n;
		for (i = 0; i < n; i++)
			f->units += units_of(&ranges[i]);
		if (cs_job_start(&f->job, fill_run, f, 0) == 0) {
			c->filler = f;
			/* The main thread's fills meanwhile go past the
			 * reserve: none writes where the thread does.  (The
			 * stop's clear starts the cache over at its start.) */
			mcache_slab_skip_to(c, pages);
			reserved(c, pages);
			return;
		}
		free(f);
	}
	for (i = 0; i < n; i++)
		populate(&ranges[i]);
	free(ranges);
	reserved(c, pages);
}

void mcache_reserve(struct memsrc_cache *c, size_t pages)
{
	reserve(c, pages, 0);
}

void mcache_reserve_start(struct memsrc_cache *c, size_t pages)
{
	reserve(c, pages, 1);
}

void mcache_reserve_cancel(struct memsrc_cache *c)
{
	if (c && c->filler)
		atomic_store(&c->filler->quit, 1);
	mcache_reserve_wait(c);
}

size_t mcache_reserve_wait(struct memsrc_cache *c)
{
	struct cache_filler *f = c ? c->filler : NULL;
	size_t helped;

	if (!f)
		return 0;
	helped = fill_units(f);
	(void)cs_job_join(f->job);
	free(f->ranges);
	free(f);
	c->filler = NULL;
	return helped;
}
