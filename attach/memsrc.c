#include "attach/memsrc.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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
 */
#define PAGE_SIZE 4096u
#define PAGE_MASK (~(uint64_t)(PAGE_SIZE - 1))

/*
 * A miss reads at least CLUSTER_MIN pages starting at the missing page:
 * neighbouring objects are usually read next.  A large read asks for the
 * pages it needs, up to CLUSTER_MAX per backend call.
 */
#define CLUSTER_MIN 8
#define CLUSTER_MAX 64

/*
 * At most this many entries (256 MiB of page data).  A dump rarely comes
 * close; when it does, the whole cache is dropped and refilled, which
 * costs system calls but never correctness.
 */
#define CACHE_MAX_ENTRIES (256u * 1024 * 1024 / PAGE_SIZE)

struct cache_page {
	struct cache_page *next;  /* hash chain */
	uint64_t addr;            /* page aligned */
	uint32_t valid;           /* readable bytes from addr */
	unsigned char data[];     /* valid bytes (none when valid == 0) */
};

struct memsrc_cache {
	struct cache_page **buckets;
	size_t nbuckets;          /* a power of two */
	size_t nentries;
	unsigned char *scratch;   /* CLUSTER_MAX pages for one backend read */
};

static size_t page_hash(uint64_t page, size_t nbuckets)
{
	/* Fibonacci hashing of the page number spreads sequential pages. */
	uint64_t h = (page >> 12) * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 32) & (nbuckets - 1);
}

static struct cache_page *cache_lookup(const struct memsrc_cache *c,
				       uint64_t page)
{
	struct cache_page *p;

	for (p = c->buckets[page_hash(page, c->nbuckets)]; p; p = p->next)
		if (p->addr == page)
			return p;
	return NULL;
}

static void cache_drop_all(struct memsrc_cache *c)
{
	size_t i;

	for (i = 0; i < c->nbuckets; i++) {
		struct cache_page *p = c->buckets[i], *next;

		for (; p; p = next) {
			next = p->next;
			free(p);
		}
		c->buckets[i] = NULL;
	}
	c->nentries = 0;
}

/* Double the bucket array; on allocation failure keep the old one (the
 * chains only get longer). */
static void cache_grow(struct memsrc_cache *c)
{
	size_t n = c->nbuckets * 2, i;
	struct cache_page **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (i = 0; i < c->nbuckets; i++) {
		struct cache_page *p = c->buckets[i], *next;

		for (; p; p = next) {
			size_t h = page_hash(p->addr, n);

			next = p->next;
			p->next = b[h];
			b[h] = p;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
}

static int cache_insert(struct memsrc_cache *c, uint64_t page,
			const unsigned char *data, uint32_t valid,
			struct cs_err *err)
{
	struct cache_page *p;
	size_t h;

	if (c->nentries >= CACHE_MAX_ENTRIES)
		cache_drop_all(c);
	if (c->nentries >= c->nbuckets)
		cache_grow(c);
	p = malloc(sizeof(*p) + valid);
	if (!p)
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	p->addr = page;
	p->valid = valid;
	if (valid)
		memcpy(p->data, data, valid);
	h = page_hash(page, c->nbuckets);
	p->next = c->buckets[h];
	c->buckets[h] = p;
	c->nentries++;
	return 0;
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

/* Bring page (and possibly the pages after it) into the cache. */
static int cache_fill(struct memsrc *ms, uint64_t page, size_t want,
		      struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t n = cluster_pages(ms, page, want), full, i;
	size_t len = n * PAGE_SIZE;
	long got;
	int ret;

	got = ms->ops->read_raw(ms, page, c->scratch, len, err);
	ms->stats.reads++;
	if (got < 0)
		return (int)got;
	if ((size_t)got > len)
		return cs_fail(err, CS_ERR_INTERNAL,
			       "backend read %ld bytes at 0x%" PRIx64
			       " for %zu requested", got, page, len);
	ms->stats.bytes_read += (uint64_t)got;

	full = (size_t)got / PAGE_SIZE;
	for (i = 0; i < full; i++) {
		ret = cache_insert(c, page + i * PAGE_SIZE,
				   c->scratch + i * PAGE_SIZE, PAGE_SIZE, err);
		if (ret)
			return ret;
	}
	/*
	 * A short count means the byte after it is unreadable: remember the
	 * page it falls in as (partly) unreadable.  Later pages are left
	 * out; they may well be readable and will be asked for on their own.
	 */
	if (full < n) {
		ret = cache_insert(c, page + full * PAGE_SIZE,
				   c->scratch + full * PAGE_SIZE,
				   (uint32_t)((size_t)got % PAGE_SIZE), err);
		if (ret)
			return ret;
	}
	return 0;
}

long memsrc_read_partial(struct memsrc *ms, uint64_t addr, void *buf,
			 size_t len, struct cs_err *err)
{
	unsigned char *out = buf;
	size_t done = 0;
	int ret;

	if (len > LONG_MAX)
		len = LONG_MAX;
	/* Each pass consumes one page (or stops), so this is bounded by len. */
	while (done < len) {
		uint64_t a = addr + done, page = a & PAGE_MASK;
		size_t off = (size_t)(a - page), chunk;
		struct cache_page *p;

		if (a < addr)
			break;  /* wrapped past the top of the address space */
		p = cache_lookup(ms->cache, page);
		if (!p) {
			size_t want = (off + (len - done) + PAGE_SIZE - 1) /
				      PAGE_SIZE;

			if (want < CLUSTER_MIN)
				want = CLUSTER_MIN;
			if (want > CLUSTER_MAX)
				want = CLUSTER_MAX;
			ret = cache_fill(ms, page, want, err);
			if (ret)
				return ret;
			p = cache_lookup(ms->cache, page);
			if (!p)
				return cs_fail(err, CS_ERR_INTERNAL,
					       "page 0x%" PRIx64
					       " missing after a fill", page);
		}
		if (off >= p->valid)
			break;
		chunk = p->valid - off;
		if (chunk > len - done)
			chunk = len - done;
		memcpy(out + done, p->data + off, chunk);
		done += chunk;
		if (p->valid < PAGE_SIZE && off + chunk == p->valid)
			break;  /* the rest of this page is unreadable */
	}
	return (long)done;
}

int memsrc_read(struct memsrc *ms, uint64_t addr, void *buf, size_t len,
		struct cs_err *err)
{
	long got = memsrc_read_partial(ms, addr, buf, len, err);

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
	unsigned char b[8];
	uint64_t v = 0;
	int i, ret;

	ret = memsrc_read(ms, addr, b, sizeof(b), err);
	if (ret)
		return ret;
	for (i = 7; i >= 0; i--)
		v = (v << 8) | b[i];
	*out = v;
	return 0;
}

void memsrc_cache_clear(struct memsrc *ms)
{
	if (ms && ms->cache)
		cache_drop_all(ms->cache);
}

const struct cs_mapping *memsrc_find_mapping(const struct memsrc *ms,
					     uint64_t addr)
{
	size_t lo = 0, hi = ms->nmaps;

	/* The last mapping starting at or below addr, if it contains it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ms->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < ms->maps[lo - 1].end)
		return &ms->maps[lo - 1];
	return NULL;
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
	s = malloc(rlen + plen + 1);
	if (!s)
		return NULL;
	memcpy(s, root, rlen);
	memcpy(s + rlen, path, plen + 1);
	return s;
}

int memsrc_init(struct memsrc *ms, const struct memsrc_ops *ops,
		void *backend, struct cs_err *err)
{
	struct memsrc_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	c->nbuckets = 1024;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	c->scratch = malloc((size_t)CLUSTER_MAX * PAGE_SIZE);
	if (!c->buckets || !c->scratch) {
		free(c->buckets);
		free(c->scratch);
		free(c);
		return cs_fail(err, CS_ERR_INTERNAL, "out of memory");
	}
	ms->ops = ops;
	ms->backend = backend;
	ms->cache = c;
	memset(&ms->stats, 0, sizeof(ms->stats));
	return 0;
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
		cache_drop_all(ms->cache);
		free(ms->cache->buckets);
		free(ms->cache->scratch);
		free(ms->cache);
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
