#include "attach/memsrc.h"
#include "attach/memsrc_cache.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/hugeheap.h"
#include "common/le.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

static size_t slot_of(uint64_t page, size_t cap)
{
	/* Fibonacci hashing of the page number spreads sequential pages. */
	uint64_t h = (page >> 12) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & (cap - 1);
}

/*
 * Keys are loaded with acquire and stored with release (plain moves on
 * x86-64): while the cache is shared, a thread looks pages up without
 * the lock another may be filling under, and a key it sees comes with
 * the entry's data and valid written before it.  Nothing is removed or
 * rehashed while shared, so a slot, once keyed, stays what it is.
 */
static uint64_t key_load(const struct cache_entry *e)
{
	return __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
}

struct cache_entry *mcache_lookup(const struct memsrc_cache *c,
					uint64_t page)
{
	uint64_t key = page | 1, k;
	size_t i = slot_of(page, c->cap);

	/* The table is never more than half full: an empty slot ends it.
	 * (Bounded all the same, by its size.) */
	for (size_t n = 0; n < c->cap && (k = key_load(&c->table[i])) != 0;
	     n++) {
		if (k == key)
			return &c->table[i];
		i = (i + 1) & (c->cap - 1);
	}
	return NULL;
}

/* Which of the cache's recent sets this thread uses (memsrc_thread()). */
static _Thread_local unsigned recent_set;

/* Forget every page; the slabs are kept for the next pages. */
static void cache_drop_all(struct memsrc_cache *c)
{
	size_t i, k;

	/* Fills start over at the slabs' start: where the reserve's thread
	 * may still be (every caller but the first is past its join). */
	mcache_reserve_wait(c);
	memset(c->table, 0, c->cap * sizeof(*c->table));
	c->nentries = 0;
	c->cur = 0;
	c->used = 0;
	c->npages = 0;
	for (k = 0; k < MEMSRC_THREADS; k++)
		for (i = 0; i < RECENT; i++) {
			c->recent[k][i].page = NO_PAGE;
			c->recent[k][i].valid = 0;
		}
	c->fill_end = NO_PAGE;
	c->cluster = CLUSTER_MIN;
	memset(c->lag, 0, sizeof(c->lag));
	c->lag_at = 0;
	c->wasted = 0;
	c->probe = 0;
}

static void table_put(struct cache_entry *t, size_t cap,
		      const struct cache_entry *e)
{
	size_t i = slot_of(e->key & PAGE_MASK, cap);

	while (t[i].key && t[i].key != e->key)
		i = (i + 1) & (cap - 1);
	t[i].data = e->data;
	t[i].valid = e->valid;
	__atomic_store_n(&t[i].used, e->used, __ATOMIC_RELAXED);
	__atomic_store_n(&t[i].key, e->key, __ATOMIC_RELEASE);
}

/* Keep the table at most half full: 0, or -1 when that would take a
 * bigger table while the cache is shared (lookups without the lock may
 * be reading this one). */
int mcache_table_reserve(struct memsrc_cache *c, size_t more)
{
	size_t cap = c->cap, i;
	struct cache_entry *t;

	while ((c->nentries + more) * 2 > cap)
		cap *= 2;
	if (cap == c->cap)
		return 0;
	if (c->shared)
		return -1;
	t = xcalloc(cap, sizeof(*t));
	for (i = 0; i < c->cap; i++)
		if (c->table[i].key)
			table_put(t, cap, &c->table[i]);
	free(c->table);
	c->table = t;
	c->cap = cap;
	return 0;
}

/* Map one more slab (not populated: its pages are faulted in as they are
 * first used, or ahead of a stop by mcache_reserve()).  Slabs double in
 * size from one huge page up to SLAB_MAX_PAGES, but need not be larger
 * than `enough` pages rounded up to whole huge pages.  Every slab is
 * whole huge pages, aligned: the readers visit a slab's pages in the
 * order of the target's pointers (the GC list above all), and with
 * 4 KiB pages nearly every object costs a TLB miss as well as a cache
 * miss; and each 4 KiB page is a fault of its own (15 us in a VM): a
 * small target's last half-megabyte slab cost more faults than all the
 * huge pages before it.  (Only advice where the kernel ignores it.) */
static void slab_add(struct memsrc_cache *c, size_t enough)
{
	const size_t huge = SLAB_HUGE_BYTES / PAGE_SIZE;
	struct slab *s;
	size_t pages;
	void *mem;

	c->slabs = xgrow(c->slabs, &c->aslabs, c->nslabs + 1,
			 sizeof(*c->slabs));
	pages = c->nslabs ? c->slabs[c->nslabs - 1].pages * 2 : huge;
	if (pages > SLAB_MAX_PAGES)
		pages = SLAB_MAX_PAGES;
	if (pages > enough)
		pages = (enough + huge - 1) / huge * huge;
	mem = hugeheap_map(pages * PAGE_SIZE);
	if (!mem)
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

void mcache_slabs_cover(struct memsrc_cache *c, size_t pages)
{
	size_t have = slab_offset(c, c->nslabs);

	/* Bounded: every slab adds at least CLUSTER_MAX pages. */
	while (have < pages) {
		slab_add(c, pages - have);
		have += c->slabs[c->nslabs - 1].pages;
	}
}

/* Room for n contiguous pages (n <= CLUSTER_MAX), not yet counted as
 * used. */
unsigned char *mcache_slab_room(struct memsrc_cache *c, size_t n)
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

void mcache_slab_skip_to(struct memsrc_cache *c, size_t page)
{
	size_t at = 0, k;

	if (!c->nslabs || slab_offset(c, c->cur) + c->used >= page)
		return;
	/* The slab holding slab page `page`: bounded by the slabs. */
	for (k = 0; k < c->nslabs; k++) {
		if (page < at + c->slabs[k].pages) {
			c->cur = k;
			c->used = page - at;
			return;
		}
		at += c->slabs[k].pages;
	}
	/* Past the last: the next fill maps a new slab. */
	c->cur = c->nslabs - 1;
	c->used = c->slabs[c->cur].pages;
}

size_t mcache_slab_left(const struct memsrc_cache *c)
{
	return c->nslabs ? c->slabs[c->cur].pages - c->used : 0;
}

/* Count pages handed out [cur, used) as faulted in. */
void mcache_slab_note_used(struct memsrc_cache *c)
{
	size_t at = slab_offset(c, c->cur) + c->used;

	if (at > c->faulted)
		c->faulted = at;
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
	while (n < want && !mcache_lookup(ms->cache, page + n * PAGE_SIZE))
		n++;
	return n;
}

/* Cache page as holding valid readable bytes at data. */
void mcache_put(struct memsrc_cache *c, uint64_t page,
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

/* A page that would not fit while the cache is shared: neither the cache
 * nor its table may be dropped or grown then.  The read counts as
 * missed, for the caller to make again, stopped (see memsrc_share()). */
static int shared_full(struct memsrc *ms, uint64_t page, struct cs_err *err)
{
	ms->missed++;
	return cs_fail(err, CS_ERR_MEMORY,
		       "the page cache is full at 0x%" PRIx64, page);
}

/* Read page and up to want - 1 (<= CLUSTER_MAX) pages after it into the
 * cache, in one backend read. */
int mcache_fill_exact(struct memsrc *ms, uint64_t page, size_t want,
			    struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t n, full, keep, i;
	unsigned char *buf;
	long got;

	if (c->npages + want > CACHE_MAX_PAGES) {
		if (c->shared)
			return shared_full(ms, page, err);
		cache_drop_all(c);
	}
	n = cluster_pages(ms, page, want);
	/* Shared, the table cannot grow: a cluster takes what room is left
	 * (a read-only cluster wants up to CLUSTER_MAX pages, and the room
	 * made for sharing is SHARED_ROOM), and only a full table fails. */
	if (c->shared) {
		size_t room = c->cap / 2 > c->nentries ?
			      c->cap / 2 - c->nentries : 0;

		if (!room)
			return shared_full(ms, page, err);
		if (n > room)
			n = room;
	}
	/* Cannot fail: shared, n fits the table as it is. */
	(void)mcache_table_reserve(c, n);
	buf = mcache_slab_room(c, n);

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
		mcache_put(c, page + i * PAGE_SIZE, buf + i * PAGE_SIZE,
			  i < full ? PAGE_SIZE :
			  (uint32_t)((size_t)got % PAGE_SIZE));
	c->used += keep;
	c->npages += keep;
	mcache_slab_note_used(c);
	c->fill_end = page + n * PAGE_SIZE;
	return 0;
}

/* May the bytes of mapping m change while the target runs?  (What the
 * capture copies; read-only mappings are read when needed.) */
int mcache_may_change(const struct cs_mapping *m)
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
		if (mcache_table_reserve(ms->cache, 1) < 0) {
			*ret = shared_full(ms, page, err);
			return 1;
		}
		mcache_put(ms->cache, page, NULL, 0);
		*ret = 0;
		return 1;
	}
	if (!mcache_may_change(m))
		return 0;
	ms->missed++;
	*ret = mcache_fill_exact(ms, page, 1, err);
	return 1;
}

/* Judge the oldest of the last random fills (CLUSTER_WASTED): did a read
 * use any of its pages but the first? */
static void judge_oldest(struct memsrc_cache *c)
{
	size_t i, n = c->lag[c->lag_at].n;
	uint64_t page = c->lag[c->lag_at].page;
	int used = 0, judged = 0;

	/* Bounded: a fill is CLUSTER_MAX pages at most. */
	for (i = 1; i < n && i < CLUSTER_MAX && !used; i++) {
		const struct cache_entry *e =
			mcache_lookup(c, page + i * PAGE_SIZE);

		if (e) {
			judged = 1;
			used = __atomic_load_n(&e->used, __ATOMIC_RELAXED) != 0;
		}
	}
	if (used)
		c->wasted = 0;
	else if (judged && c->wasted < CLUSTER_WASTED)
		c->wasted++;
}

/* Pages a random miss reads at least. */
static size_t random_cluster(struct memsrc_cache *c)
{
	judge_oldest(c);
	if (c->wasted < CLUSTER_WASTED)
		return CLUSTER_MIN;
	if (++c->probe >= CLUSTER_PROBE) {
		c->probe = 0;
		return CLUSTER_MIN;
	}
	return 1;
}

/* Bring page (and possibly the pages after it) into the cache. */
static int cache_fill(struct memsrc *ms, uint64_t page, size_t want,
		      struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	int ret, random = page != c->fill_end;

	if (ms->frozen && frozen_miss(ms, page, err, &ret))
		return ret;
	if (!random) {
		if (c->cluster < CLUSTER_MIN)
			c->cluster = CLUSTER_MIN;
		if (c->cluster < CLUSTER_MAX)
			c->cluster *= 2;
	} else {
		c->cluster = random_cluster(c);
	}
	if (want < c->cluster)
		want = c->cluster;
	if (want > CLUSTER_MAX)
		want = CLUSTER_MAX;
	ret = mcache_fill_exact(ms, page, want, err);
	if (random) {
		/* The slot judged above takes this fill (none if it failed:
		 * the same cluster is not judged twice). */
		int filled = ret == 0 && c->fill_end > page;

		c->lag[c->lag_at].page = filled ? page : 0;
		c->lag[c->lag_at].n = filled ?
			(size_t)((c->fill_end - page) / PAGE_SIZE) : 0;
		c->lag_at = (c->lag_at + 1) % CLUSTER_LAG;
	}
	return ret;
}

static struct recent_page *recent_slot(struct memsrc_cache *c, uint64_t page)
{
	return &c->recent[recent_set][(page / PAGE_SIZE) & (RECENT - 1)];
}

void memsrc_thread(unsigned k)
{
	if (k >= MEMSRC_THREADS)
		CS_BUG("memsrc_thread(%u) of %d", k, MEMSRC_THREADS);
	recent_set = k;
}

void memsrc_share(struct memsrc *ms, int on)
{
	/* One shared section at a time: both would use thread slot 1. */
	if (on && ms->cache->shared)
		CS_BUG("a memsrc shared inside a shared section");
	/* The table cannot grow while shared: room for a few fills (pages
	 * the capture missed, read-only ones) made now. */
	if (on)
		(void)mcache_table_reserve(ms->cache, SHARED_ROOM);
	ms->cache->shared = on;
}

/* Make the cached page e this thread's recent one in slot r, and mark it
 * used (once: while shared, another thread may be reading the entry). */
static void recent_note(struct recent_page *r, struct cache_entry *e,
			uint64_t page)
{
	if (!__atomic_load_n(&e->used, __ATOMIC_RELAXED))
		__atomic_store_n(&e->used, 1, __ATOMIC_RELAXED);
	r->page = page;
	r->data = e->data;
	r->valid = e->valid;
}

/* cache_page() of a page not in the thread's recent set. */
static int cache_page_slow(struct memsrc *ms, uint64_t page, size_t want,
			   struct recent_page *r, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	struct cache_entry *e = mcache_lookup(c, page);
	int ret;

	if (!e) {
		ret = cache_fill(ms, page, want, err);
		if (ret)
			return ret;
		e = mcache_lookup(c, page);
		if (!e)
			return cs_fail(err, CS_ERR_INTERNAL,
				       "page 0x%" PRIx64 " missing after a fill",
				       page);
	}
	recent_note(r, e, page);
	return 0;
}

/* The cached page, filling it on a miss; marked used (what a capture
 * plan learns from). */
static int cache_page(struct memsrc *ms, uint64_t page, size_t want,
		      const struct recent_page **out, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	struct recent_page *r = recent_slot(c, page);
	int ret = 0;

	if (r->page != page) {
		struct cache_entry *e;

		if (!c->shared) {
			*out = r;
			return cache_page_slow(ms, page, want, r, err);
		}
		/* A page already cached is found without the lock: the two
		 * threads of a shared section look up thousands of pages,
		 * and waiting for each other on the lock put them to sleep
		 * (a futex wait, tens of microseconds in a VM). */
		e = mcache_lookup(c, page);
		if (e) {
			recent_note(r, e, page);
		} else {
			pthread_mutex_lock(&c->lock);
			ret = cache_page_slow(ms, page, want, r, err);
			pthread_mutex_unlock(&c->lock);
		}
	}
	*out = r;
	return ret;
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

const void *memsrc_peek(struct memsrc *ms, uint64_t addr, size_t len)
{
	const struct recent_page *r = recent_slot(ms->cache, addr & PAGE_MASK);
	uint64_t off = addr - r->page;

	/* In this thread's recent pages?  A page is only ever dropped by a
	 * read (a full cache), which this thread makes. */
	if (off < r->valid && len <= r->valid - off)
		return r->data + off;
	return NULL;
}

void memsrc_prefetch(struct memsrc *ms, uint64_t addr, size_t len)
{
	uint64_t page = addr & PAGE_MASK, off = addr - page, at;
	const struct recent_page *r = recent_slot(ms->cache, page);
	const unsigned char *data = NULL;
	const struct cache_entry *e;
	uint32_t valid = 0;

	if (r->page == page) {
		data = r->data;
		valid = r->valid;
	} else if ((e = mcache_lookup(ms->cache, page)) != NULL) {
		/* Read without the lock, as a shared cache allows. */
		data = e->data;
		valid = e->valid;
	}
	if (!data || off >= valid)
		return;
	if (len > 256)
		len = 256;
	if (len > valid - off)
		len = valid - off;
	/* Each line the bytes touch: bounded by len / 64 + 1.  (GCC 12
	 * deletes a loop that only prefetches; an empty volatile asm is an
	 * effect it counts.) */
	for (at = off & ~(uint64_t)63; at < off + len; at += 64) {
		__builtin_prefetch(data + at);
		__asm__ volatile("");
	}
}

int memsrc_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		struct cs_err *err)
{
	const void *p = memsrc_peek(ms, addr, len);
	long got;

	/* Most reads fall in a page read shortly before.  (len 0 may come
	 * with a NULL buf: nothing to copy, nothing that can fail.) */
	if (p) {
		if (len)
			memcpy(buf, p, len);
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
	const unsigned char *p = memsrc_peek(ms, addr, 8);
	unsigned char b[8];
	int ret;

	/* The commonest read of all (pointers, types): kept short. */
	if (p) {
		*out = le_u64(p);
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

void memsrc_cache_give_up(struct memsrc *ms)
{
	const size_t huge = SLAB_HUGE_BYTES / PAGE_SIZE;
	struct memsrc_cache *c = ms ? ms->cache : NULL;
	size_t i, at = 0;

	if (!c)
		return;
	cache_drop_all(c);  /* (which waits for the reserve's thread) */
	for (i = 0; i < c->nslabs; i++) {
		const struct slab *s = &c->slabs[i];
		size_t keep = c->faulted > at ? c->faulted - at : 0;

		/* Whole huge pages (every slab is): the faulted ones, and
		 * the last one faulted into. */
		keep = (keep + huge - 1) / huge * huge;
		if (keep > s->pages)
			keep = s->pages;
		hugeheap_keep(s->mem, keep * PAGE_SIZE);
		if (keep < s->pages)
			munmap(s->mem + keep * PAGE_SIZE,
			       (s->pages - keep) * PAGE_SIZE);
		at += s->pages;
	}
	c->nslabs = 0;
	c->faulted = 0;
}

void memsrc_init(struct memsrc *ms, const struct memsrc_ops *ops,
		 void *backend)
{
	struct memsrc_cache *c = xcalloc(1, sizeof(*c));

	c->cap = 1024;
	c->table = xcalloc(c->cap, sizeof(*c->table));
	pthread_mutex_init(&c->lock, NULL);
	cache_drop_all(c);
	ms->ops = ops;
	ms->backend = backend;
	ms->cache = c;
	memset(&ms->stats, 0, sizeof(ms->stats));
}

void memsrc_close(struct memsrc *ms)
{
	/* Each backend's close is safe to repeat. */
	if (ms && ms->ops && ms->ops->close)
		ms->ops->close(ms);
}

void memsrc_free(struct memsrc *ms)
{
	if (!ms)
		return;
	memsrc_close(ms);
	cs_mappings_free(ms->maps, ms->nmaps);
	free(ms->threads);
	free(ms->root);
	free(ms->exe_path);
	if (ms->cache) {
		struct memsrc_cache *c = ms->cache;
		size_t i;

		mcache_reserve_cancel(c);
		for (i = 0; i < c->nslabs; i++)
			munmap(c->slabs[i].mem, c->slabs[i].pages * PAGE_SIZE);
		free(c->slabs);
		free(c->table);
		free(c->plan);
		free(c->plan_used);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	free(ms);
}
