#include "attach/memsrc.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/le.h"
#include "common/procfs.h"
#include "common/range.h"
#include "common/strbuf.h"
#include "common/banned.h"

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

/* Slabs grow from CLUSTER_MAX pages to SLAB_MAX_PAGES (8 MiB). */
#define SLAB_MAX_PAGES 2048

/*
 * At most this many pages (1 GiB of page data).  A dump rarely comes
 * close; when it does, the whole cache is dropped and refilled, which
 * costs system calls but never correctness.
 */
#define CACHE_MAX_PAGES (1024u * 1024 * 1024 / PAGE_SIZE)

/* Marks "no page": page addresses have their low bits 0. */
#define NO_PAGE 1u

/* Pages found recently, direct-mapped by page number: checked before the
 * table, they make most reads a compare and a copy. */
#define RECENT 256

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

	struct recent_page recent[RECENT];

	uint64_t fill_end;        /* first page after the previous fill */
	size_t cluster;           /* pages the next sequential miss reads */
	/* Slab pages handed out at least once, in slab order: those are
	 * faulted in (slabs are mapped without MAP_POPULATE). */
	size_t faulted;

	/* The pages memsrc_capture(MEMSRC_CAPTURE_PLAN) copies; sorted and
	 * unique when plan_sorted.  Kept when the cache is dropped. */
	uint64_t *plan;
	size_t nplan, aplan;
	int plan_sorted;
};

static size_t slot_of(uint64_t page, size_t cap)
{
	/* Fibonacci hashing of the page number spreads sequential pages. */
	uint64_t h = (page >> 12) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & (cap - 1);
}

static struct cache_entry *cache_lookup(const struct memsrc_cache *c,
					uint64_t page)
{
	uint64_t key = page | 1;
	size_t i = slot_of(page, c->cap);

	/* The table is never more than half full: an empty slot ends it. */
	while (c->table[i].key) {
		if (c->table[i].key == key)
			return &c->table[i];
		i = (i + 1) & (c->cap - 1);
	}
	return NULL;
}

/* Forget every page; the slabs are kept for the next pages. */
static void cache_drop_all(struct memsrc_cache *c)
{
	size_t i;

	memset(c->table, 0, c->cap * sizeof(*c->table));
	c->nentries = 0;
	c->cur = 0;
	c->used = 0;
	c->npages = 0;
	for (i = 0; i < RECENT; i++) {
		c->recent[i].page = NO_PAGE;
		c->recent[i].valid = 0;
	}
	c->fill_end = NO_PAGE;
	c->cluster = CLUSTER_MIN;
}

static void table_put(struct cache_entry *t, size_t cap,
		      const struct cache_entry *e)
{
	size_t i = slot_of(e->key & PAGE_MASK, cap);

	while (t[i].key && t[i].key != e->key)
		i = (i + 1) & (cap - 1);
	t[i] = *e;
}

/* Keep the table at most half full. */
static void table_reserve(struct memsrc_cache *c, size_t more)
{
	size_t cap = c->cap, i;
	struct cache_entry *t;

	while ((c->nentries + more) * 2 > cap)
		cap *= 2;
	if (cap == c->cap)
		return;
	t = xcalloc(cap, sizeof(*t));
	for (i = 0; i < c->cap; i++)
		if (c->table[i].key)
			table_put(t, cap, &c->table[i]);
	free(c->table);
	c->table = t;
	c->cap = cap;
}

/* Map one more slab (not populated: its pages are faulted in as they are
 * first used, or ahead of a stop by cache_reserve()).  Slabs double in
 * size up to SLAB_MAX_PAGES, but need not be larger than `enough` pages
 * (nor smaller than CLUSTER_MAX). */
static void slab_add(struct memsrc_cache *c, size_t enough)
{
	struct slab *s;
	size_t pages;
	void *mem;

	c->slabs = xgrow(c->slabs, &c->aslabs, c->nslabs + 1,
			 sizeof(*c->slabs));
	pages = c->nslabs ? c->slabs[c->nslabs - 1].pages * 2 : CLUSTER_MAX;
	if (pages > SLAB_MAX_PAGES)
		pages = SLAB_MAX_PAGES;
	if (pages > enough)
		pages = enough > CLUSTER_MAX ? enough : CLUSTER_MAX;
	mem = mmap(NULL, pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		xdie_out_of_memory();
	s = &c->slabs[c->nslabs++];
	s->mem = mem;
	s->pages = pages;
}

/* Pages of the slabs before slabs[k]. */
static size_t slab_offset(const struct memsrc_cache *c, size_t k)
{
	size_t i, n = 0;

	for (i = 0; i < k; i++)
		n += c->slabs[i].pages;
	return n;
}

/* Room for n contiguous pages (n <= CLUSTER_MAX), not yet counted as
 * used. */
static unsigned char *slab_room(struct memsrc_cache *c, size_t n)
{
	if (c->nslabs && c->slabs[c->cur].pages - c->used >= n)
		return c->slabs[c->cur].mem + c->used * PAGE_SIZE;
	if (!c->nslabs || c->cur + 1 >= c->nslabs) {
		slab_add(c, SLAB_MAX_PAGES);
		if (c->nslabs == 1) {
			c->used = 0;
			return c->slabs[0].mem;
		}
	}
	/* Every slab holds at least CLUSTER_MAX pages. */
	c->cur++;
	c->used = 0;
	return c->slabs[c->cur].mem;
}

/* Count pages handed out [cur, used) as faulted in. */
static void slab_note_used(struct memsrc_cache *c)
{
	size_t at = slab_offset(c, c->cur) + c->used;

	if (at > c->faulted)
		c->faulted = at;
}

/*
 * Fault in the slab pages the next `pages` cached pages will use, counted
 * from the start of the slabs (where a cleared cache starts again), and
 * make the table big enough for them: done before a stop, so that the
 * capture during it waits for no page faults of coroscope's own.  Only
 * pages that will be filled are touched.
 */
static void cache_reserve(struct memsrc_cache *c, size_t pages)
{
	size_t have = slab_offset(c, c->nslabs), at = 0, i;

	/* Bounded: every slab adds at least CLUSTER_MAX pages. */
	while (have < pages) {
		slab_add(c, pages - have);
		have += c->slabs[c->nslabs - 1].pages;
	}
	for (i = 0; i < c->nslabs && at < pages; i++) {
		size_t lo = c->faulted > at ? c->faulted - at : 0;
		size_t hi = pages - at < c->slabs[i].pages ?
			    pages - at : c->slabs[i].pages;
		unsigned char *mem = c->slabs[i].mem;

		if (lo < hi && madvise(mem + lo * PAGE_SIZE,
				       (hi - lo) * PAGE_SIZE,
				       MADV_POPULATE_WRITE) < 0) {
			size_t k;

			/* Before Linux 5.14: touch each page instead. */
			for (k = lo; k < hi; k++)
				mem[k * PAGE_SIZE] = 0;
		}
		at += c->slabs[i].pages;
	}
	if (pages > c->faulted)
		c->faulted = pages;
	table_reserve(c, pages);
}

/*
 * How many pages, starting at page, one backend read should cover: want
 * pages, but not past the end of the mapping holding page (the rest would
 * fail anyway, or belong to an unrelated mapping), and not over a page
 * that is already cached.
 */
static size_t cluster_pages(const struct memsrc *ms, uint64_t page,
			    size_t want)
{
	const struct cs_mapping *m = memsrc_find_mapping(ms, page);
	size_t n = 1;

	if (m) {
		uint64_t left = (m->end - page + PAGE_SIZE - 1) / PAGE_SIZE;

		if (left < want)
			want = (size_t)left;
	} else if (ms->nmaps) {
		/* Not in any known mapping: probably a bad pointer, but the
		 * mappings may be stale, so ask the backend about one page. */
		want = 1;
	}
	/* Stop before the top of the address space wraps around. */
	if (want > (UINT64_MAX - page) / PAGE_SIZE + 1)
		want = (size_t)((UINT64_MAX - page) / PAGE_SIZE + 1);
	while (n < want && !cache_lookup(ms->cache, page + n * PAGE_SIZE))
		n++;
	return n;
}

/* Cache page as holding valid readable bytes at data. */
static void cache_put(struct memsrc_cache *c, uint64_t page,
		      unsigned char *data, uint32_t valid)
{
	struct cache_entry e;

	e.key = page | 1;
	e.data = data;
	e.valid = valid;
	e.used = 0;
	table_put(c->table, c->cap, &e);
	c->nentries++;
}

/* Read page and up to want - 1 (<= CLUSTER_MAX) pages after it into the
 * cache, in one backend read. */
static int cache_fill_exact(struct memsrc *ms, uint64_t page, size_t want,
			    struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t n, full, keep, i;
	unsigned char *buf;
	long got;

	if (c->npages + want > CACHE_MAX_PAGES)
		cache_drop_all(c);
	n = cluster_pages(ms, page, want);
	buf = slab_room(c, n);
	table_reserve(c, n);

	got = ms->ops->read_raw(ms, page, buf, n * PAGE_SIZE, err);
	ms->stats.reads++;
	if (got < 0)
		return (int)got;
	if ((size_t)got > n * PAGE_SIZE)
		return cs_fail(err, CS_ERR_INTERNAL,
			       "backend read %ld bytes at 0x%" PRIx64
			       " for %zu requested", got, page, n * PAGE_SIZE);
	ms->stats.bytes_read += (uint64_t)got;

	/*
	 * A short count means the byte after it is unreadable: remember the
	 * page it falls in as (partly) unreadable.  Later pages are left
	 * out; they may well be readable and will be asked for on their own.
	 */
	full = (size_t)got / PAGE_SIZE;
	keep = full < n ? full + 1 : full;
	for (i = 0; i < keep; i++)
		cache_put(c, page + i * PAGE_SIZE, buf + i * PAGE_SIZE,
			  i < full ? PAGE_SIZE :
			  (uint32_t)((size_t)got % PAGE_SIZE));
	c->used += keep;
	c->npages += keep;
	slab_note_used(c);
	c->fill_end = page + n * PAGE_SIZE;
	return 0;
}

/* May the bytes of mapping m change while the target runs?  (What the
 * capture copies; read-only mappings are read when needed.) */
static int may_change(const struct cs_mapping *m)
{
	return m->perms[1] == 'w';
}

/*
 * A page missing from the cache of a captured (frozen) source.  The
 * mappings were read during the stop: a page in none of them, or in one
 * that may not be read, was unreadable then, whatever the target did
 * since.  A page that may change should have been captured: it is read
 * from the target as it is now (one page: what its neighbours hold now
 * must not pass for captured) and counted in ms->missed, so that the
 * caller knows its picture is not the stop's and reads again.  1 when
 * handled here, 0 for a page to read as usual (read-only).
 */
static int frozen_miss(struct memsrc *ms, uint64_t page, struct cs_err *err,
		       int *ret)
{
	const struct cs_mapping *m = memsrc_find_mapping(ms, page);

	if (!m || m->perms[0] != 'r') {
		table_reserve(ms->cache, 1);
		cache_put(ms->cache, page, NULL, 0);
		*ret = 0;
		return 1;
	}
	if (!may_change(m))
		return 0;
	ms->missed++;
	*ret = cache_fill_exact(ms, page, 1, err);
	return 1;
}

/* Bring page (and possibly the pages after it) into the cache. */
static int cache_fill(struct memsrc *ms, uint64_t page, size_t want,
		      struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	int ret;

	if (ms->frozen && frozen_miss(ms, page, err, &ret))
		return ret;
	if (page == c->fill_end) {
		if (c->cluster < CLUSTER_MAX)
			c->cluster *= 2;
	} else {
		c->cluster = CLUSTER_MIN;
	}
	if (want < c->cluster)
		want = c->cluster;
	if (want > CLUSTER_MAX)
		want = CLUSTER_MAX;
	return cache_fill_exact(ms, page, want, err);
}

static struct recent_page *recent_slot(struct memsrc_cache *c, uint64_t page)
{
	return &c->recent[(page / PAGE_SIZE) & (RECENT - 1)];
}

/* The cached page, filling it on a miss; marked used (what a capture
 * plan learns from). */
static int cache_page(struct memsrc *ms, uint64_t page, size_t want,
		      const struct recent_page **out, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	struct recent_page *r = recent_slot(c, page);
	struct cache_entry *e;
	int ret;

	if (r->page != page) {
		e = cache_lookup(c, page);
		if (!e) {
			ret = cache_fill(ms, page, want, err);
			if (ret)
				return ret;
			e = cache_lookup(c, page);
			if (!e)
				return cs_fail(err, CS_ERR_INTERNAL,
					       "page 0x%" PRIx64
					       " missing after a fill", page);
		}
		e->used = 1;
		r->page = page;
		r->data = e->data;
		r->valid = e->valid;
	}
	*out = r;
	return 0;
}

long memsrc_read_partial(struct memsrc *ms, uint64_t addr, void *buf,
			 size_t len, struct cs_err *err)
{
	unsigned char *out = buf;
	size_t done = 0;

	if (len > LONG_MAX)
		len = LONG_MAX;
	/* Each pass consumes one page (or stops), so this is bounded by len. */
	while (done < len) {
		uint64_t a = addr + done, page = a & PAGE_MASK;
		size_t off = (size_t)(a - page), chunk;
		const struct recent_page *r = NULL;
		int ret;

		if (a < addr)
			break;  /* wrapped past the top of the address space */
		ret = cache_page(ms, page, (off + (len - done) + PAGE_SIZE - 1) /
				 PAGE_SIZE, &r, err);
		if (ret)
			return ret;
		if (off >= r->valid)
			break;
		chunk = r->valid - off;
		if (chunk > len - done)
			chunk = len - done;
		memcpy(out + done, r->data + off, chunk);
		done += chunk;
		if (r->valid < PAGE_SIZE && off + chunk == r->valid)
			break;  /* the rest of this page is unreadable */
	}
	return (long)done;
}

int memsrc_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		struct cs_err *err)
{
	const struct recent_page *r = recent_slot(ms->cache, addr & PAGE_MASK);
	uint64_t off = addr - r->page;
	long got;

	/* Most reads fall in a page read shortly before.  (len 0 may come
	 * with a NULL buf: nothing to copy, nothing that can fail.) */
	if (off < r->valid && len <= r->valid - off) {
		if (len)
			memcpy(buf, r->data + off, len);
		return 0;
	}
	got = memsrc_read_partial(ms, addr, buf, len, err);
	if (got < 0)
		return (int)got;
	if ((size_t)got < len)
		return cs_fail(err, CS_ERR_MEMORY,
			       "cannot read %zu bytes at 0x%" PRIx64
			       ": address 0x%" PRIx64 " is not readable",
			       len, addr, addr + (uint64_t)got);
	return 0;
}

int memsrc_read_u64(struct memsrc *ms, uint64_t addr, uint64_t *out,
		    struct cs_err *err)
{
	const struct recent_page *r = recent_slot(ms->cache, addr & PAGE_MASK);
	uint64_t off = addr - r->page;
	unsigned char b[8];
	int ret;

	/* The commonest read of all (pointers, types): kept short. */
	if (off < r->valid && r->valid - off >= sizeof(b)) {
		*out = le_u64(r->data + off);
		return 0;
	}
	ret = memsrc_read(ms, addr, b, sizeof(b), err);
	if (ret)
		return ret;
	*out = le_u64(b);
	return 0;
}

void memsrc_cache_clear(struct memsrc *ms)
{
	if (ms && ms->cache)
		cache_drop_all(ms->cache);
	if (ms) {
		ms->frozen = MEMSRC_LIVE;
		ms->missed = 0;
	}
}

uint64_t memsrc_writable_bytes(const struct memsrc *ms)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < ms->nmaps; i++)
		if (may_change(&ms->maps[i]))
			total += ms->maps[i].end - ms->maps[i].start;
	return total;
}

static void plan_push(struct memsrc_cache *c, uint64_t page)
{
	c->plan = xgrow(c->plan, &c->aplan, c->nplan + 1, sizeof(*c->plan));
	c->plan[c->nplan++] = page;
	c->plan_sorted = 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void plan_sort(struct memsrc_cache *c)
{
	size_t i, out = 0;

	if (c->plan_sorted)
		return;
	if (c->nplan > 1)
		qsort(c->plan, c->nplan, sizeof(*c->plan), u64_cmp);
	for (i = 0; i < c->nplan; i++)
		if (!out || c->plan[out - 1] != c->plan[i])
			c->plan[out++] = c->plan[i];
	c->nplan = out;
	c->plan_sorted = 1;
}

/* Add the pages of [lo, hi) that lie in a changeable mapping. */
static void plan_range(struct memsrc *ms, uint64_t lo, uint64_t hi)
{
	uint64_t page;

	/* Bounded by the range, which callers keep small. */
	for (page = lo & PAGE_MASK; page < hi && page >= (lo & PAGE_MASK);
	     page += PAGE_SIZE) {
		const struct cs_mapping *m = memsrc_find_mapping(ms, page);

		if (m && may_change(m))
			plan_push(ms->cache, page);
	}
}

size_t memsrc_plan_learn(struct memsrc *ms)
{
	struct memsrc_cache *c = ms->cache;
	const uint64_t block = PLAN_BLOCK * PAGE_SIZE;
	size_t i;

	for (i = 0; i < c->cap; i++) {
		uint64_t page = c->table[i].key & PAGE_MASK;
		const struct cs_mapping *m;

		if (!c->table[i].key || !c->table[i].used)
			continue;
		m = memsrc_find_mapping(ms, page);
		if (m && may_change(m))
			plan_range(ms, page - page % block,
				   page - page % block + block);
	}
	plan_sort(c);
	/* Room for the capture now, so that the stop does not also wait
	 * for coroscope's own new memory; the stop drops the cached pages,
	 * not the slabs, so the pages this pass filled are used again. */
	if (c->nplan <= CACHE_MAX_PAGES / 2)
		cache_reserve(c, c->nplan);
	return c->nplan;
}

void memsrc_reserve_all(struct memsrc *ms)
{
	uint64_t pages = memsrc_writable_bytes(ms) / PAGE_SIZE;

	if (pages <= CACHE_MAX_PAGES / 2)
		cache_reserve(ms->cache, (size_t)pages);
}

void memsrc_plan_add(struct memsrc *ms, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;

	plan_range(ms, addr, end);
}

/* Pages in the planned run starting at plan[i] (consecutive pages not
 * yet cached, CLUSTER_MAX at most). */
static size_t plan_run(const struct memsrc_cache *c, size_t i)
{
	size_t run = 1;

	while (i + run < c->nplan && run < CLUSTER_MAX &&
	       c->plan[i + run] == c->plan[i] + run * PAGE_SIZE &&
	       !cache_lookup(c, c->plan[i + run]))
		run++;
	return run;
}

/*
 * Copy up to MEMSRC_RUNS_MAX planned runs from plan[*i] on in one
 * backend call, and cache every run read whole.  *i moves past them, and
 * stops at the first run that was not (for capture_plan() to read on its
 * own).  0 or a status.
 */
static int capture_batch(struct memsrc *ms, size_t *i, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	struct memsrc_run runs[MEMSRC_RUNS_MAX];
	unsigned char *bufs[MEMSRC_RUNS_MAX];
	size_t first[MEMSRC_RUNS_MAX];
	size_t n = 0, k = *i, pages = 0, r, p;
	long got;

	while (k < c->nplan && n < MEMSRC_RUNS_MAX) {
		size_t run;

		if (cache_lookup(c, c->plan[k])) {
			k++;
			continue;
		}
		run = plan_run(c, k);
		runs[n].addr = c->plan[k];
		runs[n].len = run * PAGE_SIZE;
		bufs[n] = slab_room(c, run);
		first[n++] = k;
		/* Handed out now, so that the next run gets its own room. */
		c->used += run;
		pages += run;
		k += run;
	}
	slab_note_used(c);
	if (!n) {
		*i = k;
		return 0;
	}
	table_reserve(c, pages);
	got = ms->ops->read_runs(ms, runs, bufs, n, err);
	ms->stats.reads++;
	if (got < 0)
		return (int)got;
	ms->stats.bytes_read += (uint64_t)got;
	for (r = 0; r < n && (size_t)got >= runs[r].len; r++) {
		for (p = 0; p < runs[r].len / PAGE_SIZE; p++)
			cache_put(c, runs[r].addr + p * PAGE_SIZE,
				  bufs[r] + p * PAGE_SIZE, PAGE_SIZE);
		c->npages += runs[r].len / PAGE_SIZE;
		got -= (long)runs[r].len;
	}
	*i = r < n ? first[r] : k;
	return 0;
}

/* Copy the planned pages: runs of consecutive pages, many runs to a
 * backend call where the backend can, else one run (up to CLUSTER_MAX
 * pages) each. */
static int capture_plan(struct memsrc *ms, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	int batch = ms->ops->read_runs != NULL;
	size_t i = 0;
	int ret = 0;

	/* The batches share the cache's limit with everything else. */
	if (c->npages + c->nplan > CACHE_MAX_PAGES)
		batch = 0;
	/* Each round moves past a cached page or caches plan[i] (a fill
	 * always caches its first page, if only as unreadable): bounded.  A
	 * fill may stop short (at a mapping's end, an unreadable page): the
	 * rest of its run is filled in later rounds. */
	while (i < c->nplan && ret == 0) {
		if (batch) {
			ret = capture_batch(ms, &i, err);
			if (ret || i >= c->nplan)
				break;
		}
		if (cache_lookup(c, c->plan[i])) {
			i++;
			continue;
		}
		ret = cache_fill_exact(ms, c->plan[i], plan_run(c, i), err);
	}
	return ret;
}

/* Copy every changeable mapping. */
static int capture_all(struct memsrc *ms, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t i;
	int ret = 0;

	/* Fill the cache directly, in the largest reads a fill makes
	 * (slabs are sized for them), copying nothing out. */
	for (i = 0; i < ms->nmaps && ret == 0; i++) {
		const struct cs_mapping *m = &ms->maps[i];
		uint64_t page;

		if (!may_change(m))
			continue;
		/* Each round moves on a page or fills it: bounded.  A page
		 * that cannot be read is cached as unreadable and skipped. */
		for (page = m->start & PAGE_MASK; page < m->end && ret == 0;) {
			if (cache_lookup(c, page)) {
				page += PAGE_SIZE;
				continue;
			}
			ret = cache_fill_exact(ms, page, CLUSTER_MAX, err);
			if (ret == 0 && !cache_lookup(c, page))
				ret = cs_fail(err, CS_ERR_INTERNAL,
					      "page 0x%" PRIx64 " missing after a fill",
					      page);
		}
	}
	return ret;
}

int memsrc_capture(struct memsrc *ms, enum memsrc_capture_what what,
		   size_t max_bytes, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	uint64_t total;
	int ret;

	if (what == MEMSRC_CAPTURE_PLAN)
		plan_sort(c);
	total = what == MEMSRC_CAPTURE_PLAN ? (uint64_t)c->nplan * PAGE_SIZE :
		memsrc_writable_bytes(ms);
	/* Leave half the cache for the read-only pages decoding will want:
	 * a full cache is dropped, and a dropped capture would be re-read
	 * from a target that has moved on. */
	if (!ms->nmaps || total > max_bytes ||
	    total / PAGE_SIZE > CACHE_MAX_PAGES / 2)
		return 0;
	ret = what == MEMSRC_CAPTURE_PLAN ? capture_plan(ms, err) :
	      capture_all(ms, err);
	c->cluster = CLUSTER_MIN;
	if (ret < 0)
		return ret;
	ms->frozen = what == MEMSRC_CAPTURE_PLAN ? MEMSRC_FROZEN_PLAN :
		     MEMSRC_FROZEN_ALL;
	ms->missed = 0;
	return 1;
}

const struct cs_mapping *memsrc_find_mapping(const struct memsrc *ms,
					     uint64_t addr)
{
	struct range_array ra = {
		ms->maps, ms->nmaps, sizeof(*ms->maps),
		offsetof(struct cs_mapping, start),
		offsetof(struct cs_mapping, end),
	};

	return range_find(&ra, addr);
}

char *memsrc_target_path(const struct memsrc *ms, const char *path)
{
	const char *root = ms->root ? ms->root : "";
	size_t rlen = strlen(root), plen = strlen(path);
	char *s;

	if (ms->ops && ms->ops->host_path)
		return ms->ops->host_path(ms, path);

	/* "/proc/PID/root" + "/usr/lib/x.so": avoid a doubled slash. */
	while (rlen && root[rlen - 1] == '/' && path[0] == '/')
		rlen--;
	s = xmalloc(rlen + plen + 1);
	memcpy(s, root, rlen);
	memcpy(s + rlen, path, plen + 1);
	return s;
}

void memsrc_init(struct memsrc *ms, const struct memsrc_ops *ops,
		 void *backend)
{
	struct memsrc_cache *c = xcalloc(1, sizeof(*c));

	c->cap = 1024;
	c->table = xcalloc(c->cap, sizeof(*c->table));
	cache_drop_all(c);
	ms->ops = ops;
	ms->backend = backend;
	ms->cache = c;
	memset(&ms->stats, 0, sizeof(ms->stats));
}

void memsrc_free(struct memsrc *ms)
{
	if (!ms)
		return;
	if (ms->ops && ms->ops->close)
		ms->ops->close(ms);
	cs_mappings_free(ms->maps, ms->nmaps);
	free(ms->threads);
	free(ms->root);
	free(ms->exe_path);
	if (ms->cache) {
		struct memsrc_cache *c = ms->cache;
		size_t i;

		for (i = 0; i < c->nslabs; i++)
			munmap(c->slabs[i].mem, c->slabs[i].pages * PAGE_SIZE);
		free(c->slabs);
		free(c->table);
		free(c->plan);
		free(c);
	}
	free(ms);
}

static int mapping_cmp(const void *a, const void *b)
{
	const struct cs_mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

void cs_mappings_sort(struct cs_mapping *maps, size_t n)
{
	if (n > 1)
		qsort(maps, n, sizeof(*maps), mapping_cmp);
}

void cs_mappings_free(struct cs_mapping *maps, size_t n)
{
	size_t i;

	if (!maps)
		return;
	for (i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}
