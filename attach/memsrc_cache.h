/*
 * The page cache behind struct memsrc, shared by attach/memsrc.c (reads
 * through the cache) and attach/memsrc_capture.c (copies a stopped
 * target into it).  Not for use outside attach/memsrc*.c.
 */
#ifndef COROSCOPE_ATTACH_MEMSRC_CACHE_H
#define COROSCOPE_ATTACH_MEMSRC_CACHE_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "attach/memsrc.h"

/*
 * The page cache.  Pages are 4 KiB whatever the target's page size: the
 * size only decides the granularity of caching and of "unreadable".
 *
 * Each entry records how many bytes from the start of its page are
 * readable: PAGE_SIZE for a normal page, 0 for an unreadable page (the
 * negative cache, so that a reader probing a bad pointer costs one system
 * call, not one per probe), and anything between for a page the backend
 * could only read in part (a truncated core).
 *
 * A dump reads tens or hundreds of megabytes of heap (the GC walk visits
 * every object), so the cache is built for that volume: the backend reads
 * straight into large slabs of pages (no copy, no allocation per page),
 * pages are found through an open-addressed table, and a small array of
 * recently used pages is checked before it, since most reads are small
 * and land near one read shortly before.
 */
#define PAGE_SIZE 4096u
#define PAGE_MASK (~(uint64_t)(PAGE_SIZE - 1))

/*
 * A miss reads at least CLUSTER_MIN pages starting at the missing page:
 * neighbouring objects are usually read next.  A miss on the page right
 * after the previous fill is a sequential scan (the GC walk over a pool
 * of objects): each such miss doubles the cluster, up to CLUSTER_MAX, so
 * a large heap costs few system calls.  A large read asks for the pages
 * it needs, up to CLUSTER_MAX per backend call.
 */
#define CLUSTER_MIN 8
#define CLUSTER_MAX 128

/*
 * Unless a miss's neighbours go unread: 10,000 greenlets each keep their
 * frames at the start of a 16 KiB data stack chunk of their own, and
 * clusters read four times the bytes the readers used (and coroscope's
 * memory grew by as much).  Each random miss (not a sequential scan's)
 * judges the cluster read CLUSTER_LAG random misses before it: were any
 * of its pages but the first used since?  After CLUSTER_WASTED such
 * clusters in a row whose other pages no read used, random misses read
 * one page, but every CLUSTER_PROBE-th still reads a cluster, whose
 * judgement may end the run.
 */
#define CLUSTER_LAG 8
#define CLUSTER_WASTED 32
#define CLUSTER_PROBE 16

/* Slabs grow from one huge page (SLAB_HUGE_BYTES) to SLAB_MAX_PAGES
 * (8 MiB); every slab is whole huge pages (see slab_add()). */
#define SLAB_MAX_PAGES 2048
/* One x86-64 huge page. */
#define SLAB_HUGE_BYTES (2u << 20)

/*
 * At most this many pages (1 GiB of page data).  A dump rarely comes
 * close; when it does, the whole cache is dropped and refilled, which
 * costs system calls but never correctness.
 */
#define CACHE_MAX_PAGES (1024u * 1024 * 1024 / PAGE_SIZE)

/* Marks "no page": page addresses have their low bits 0. */
#define NO_PAGE 1u

/* Pages found recently, direct-mapped by page number: checked before the
 * table, they make most reads a compare and a copy.  One set for each
 * thread that may read at once (memsrc_share()). */
#define RECENT 256

/* Table room for this many more pages is made before a cache is shared
 * (and before a capture): the table cannot grow while shared, since
 * other threads look pages up in it without the lock. */
#define SHARED_ROOM (2 * CLUSTER_MAX)

/*
 * memsrc_plan_learn() plans to capture each changeable page a pass used
 * (not the rest of the clusters it read) with its aligned block of
 * PLAN_BLOCK pages (16 KiB, a pymalloc pool): what the target allocates
 * between that pass and the stop mostly lands next to what it saw.
 */
#define PLAN_BLOCK 4

struct cache_entry {
	uint64_t key;             /* page address | 1; 0 = empty slot */
	unsigned char *data;      /* in a slab; valid bytes (NULL if none) */
	uint32_t valid;           /* readable bytes from the page's start */
	uint32_t used;            /* a read used it (not only its cluster) */
};

struct recent_page {
	uint64_t page;            /* or NO_PAGE */
	const unsigned char *data;
	uint32_t valid;           /* 0 for an empty slot */
};

struct slab {
	unsigned char *mem;
	size_t pages;
};

struct memsrc_cache {
	struct cache_entry *table;
	size_t cap;               /* a power of two */
	size_t nentries;
	struct slab *slabs;
	size_t nslabs, aslabs;
	size_t cur, used;         /* pages used in slabs[cur] */
	size_t npages;            /* slab pages holding data */

	struct recent_page recent[MEMSRC_THREADS][RECENT];
	/* While shared (memsrc_share()), what is not in a thread's recent
	 * set is looked up and filled under this lock. */
	int shared;
	pthread_mutex_t lock;

	uint64_t fill_end;        /* first page after the previous fill */
	size_t cluster;           /* pages the next sequential miss reads */
	/* The last CLUSTER_LAG random fills, oldest at lag_at (pages 0:
	 * none), and the judgements so far (see CLUSTER_WASTED). */
	struct {
		uint64_t page;
		size_t n;
	} lag[CLUSTER_LAG];
	size_t lag_at;
	unsigned wasted;          /* clusters in a row none of whose other
				     pages a read used, up to CLUSTER_WASTED */
	unsigned probe;           /* random misses since the last probe */
	/* Slab pages handed out at least once, in slab order: those are
	 * faulted in (slabs are mapped without MAP_POPULATE). */
	size_t faulted;
	/* mcache_reserve_start()'s thread, while it runs. */
	struct cache_filler *filler;

	/* Whether the next capture caches the pages the target never
	 * wrote as zeros rather than copying them (memsrc_capture.c),
	 * decided when its room is set up. */
	int skip_unwritten;

	/* The pages memsrc_capture(MEMSRC_CAPTURE_PLAN) copies; sorted and
	 * unique when plan_sorted.  Kept when the cache is dropped. */
	uint64_t *plan;
	size_t nplan, aplan;
	int plan_sorted;
	/* The pages reads used among them, before their blocks were added:
	 * sorted and unique (memsrc_plan_learn() keeps them so). */
	uint64_t *plan_used;
	size_t nplan_used, aplan_used;
};

/* The entry of a cached page, or NULL. */
struct cache_entry *mcache_lookup(const struct memsrc_cache *c, uint64_t page);
/* Keep the table at most half full with `more` entries added: 0, or -1
 * when that needs a bigger table while the cache is shared. */
int mcache_table_reserve(struct memsrc_cache *c, size_t more);
/* Room for n contiguous pages (n <= CLUSTER_MAX), not yet counted as
 * used; the caller adds what it uses to c->used, then calls
 * mcache_slab_note_used(). */
unsigned char *mcache_slab_room(struct memsrc_cache *c, size_t n);
/* Pages left in the slab mcache_slab_room() hands out from now (0 when
 * there is none: the next call maps one). */
size_t mcache_slab_left(const struct memsrc_cache *c);
void mcache_slab_note_used(struct memsrc_cache *c);
/* Fill from slab page `page` on (counted from the start of the slabs)
 * if the fills have not gone past it. */
void mcache_slab_skip_to(struct memsrc_cache *c, size_t page);
/* Map slabs enough to hold `pages` pages from the start of the slabs
 * (not faulted in). */
void mcache_slabs_cover(struct memsrc_cache *c, size_t pages);
/* Set up and fault in the slab pages, and table room, for `pages` pages
 * filled from an empty cache (attach/memsrc_reserve.c). */
void mcache_reserve(struct memsrc_cache *c, size_t pages);
/* The same, the pages faulted in on a thread of its own where there are
 * two CPUs, while the caller goes on (it may use the cache meanwhile). */
void mcache_reserve_start(struct memsrc_cache *c, size_t pages);
/* Wait for mcache_reserve_start()'s thread, if one runs: before a stop
 * (memsrc_reserve_wait()), a drop of the cached pages (fills start over
 * where the thread may be), and before the slabs are unmapped or given
 * up.  The caller faults in pages the thread has not got to meanwhile;
 * the number of huge-page-sized units it did. */
size_t mcache_reserve_wait(struct memsrc_cache *c);
/* The same, for slabs about to be unmapped: the thread stops early. */
void mcache_reserve_cancel(struct memsrc_cache *c);
/* Cache page as holding valid readable bytes at data. */
void mcache_put(struct memsrc_cache *c, uint64_t page, unsigned char *data,
		uint32_t valid);
/* Read page and up to want - 1 (<= CLUSTER_MAX) pages after it, in one
 * backend read.  0 or a status. */
int mcache_fill_exact(struct memsrc *ms, uint64_t page, size_t want,
		      struct cs_err *err);
/* May the bytes of mapping m change while the target runs? */
int mcache_may_change(const struct cs_mapping *m);

#endif
