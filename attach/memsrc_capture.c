/*
 * Capturing a stopped target into the page cache: every writable
 * mapping, or the pages of a plan learnt from what a pass of the readers
 * used (see attach/memsrc.h).
 */
#include "attach/memsrc.h"
#include "attach/memsrc_cache.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/jobs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "common/banned.h"

uint64_t memsrc_writable_bytes(const struct memsrc *ms)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < ms->nmaps; i++)
		if (mcache_may_change(&ms->maps[i]))
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

/* Sort v[0..*n) and drop repeats. */
static void pages_sort(uint64_t *v, size_t *n)
{
	size_t i, out = 0;

	if (*n > 1)
		qsort(v, *n, sizeof(*v), u64_cmp);
	for (i = 0; i < *n; i++)
		if (!out || v[out - 1] != v[i])
			v[out++] = v[i];
	*n = out;
}

static void plan_sort(struct memsrc_cache *c)
{
	if (c->plan_sorted)
		return;
	pages_sort(c->plan, &c->nplan);
	c->plan_sorted = 1;
}

/* Add the pages of [lo, hi) that lie in a changeable mapping, up to the
 * first that does not after one that did (lo may fall in the guard page
 * below a stack, when its pointer is within the red zone of its end). */
static void plan_range(struct memsrc *ms, uint64_t lo, uint64_t hi)
{
	uint64_t page;
	int planned = 0;

	/* Bounded by the range, which callers keep small. */
	for (page = lo & PAGE_MASK; page < hi && page >= (lo & PAGE_MASK);
	     page += PAGE_SIZE) {
		const struct cs_mapping *m = memsrc_find_mapping(ms, page);

		if (m && mcache_may_change(m)) {
			plan_push(ms->cache, page);
			planned = 1;
		} else if (planned) {
			break;
		}
	}
}

/*
 * Pages the target never wrote.  In a private anonymous mapping (its
 * heap, stacks, arenas) a page that is neither in memory nor swapped
 * out reads as zeros: a capture caches it as such instead of copying
 * it, and space for it is not set up ahead.  A thread's stack is mostly
 * such pages, and so are 10,000 greenlets' 16 KiB data stack chunks but
 * for their first page.  Elsewhere (a file's or a shared mapping's
 * page may hold data this process has not mapped in yet) every page is
 * copied.  Only the backend can tell (memsrc_ops.resident); during a
 * stop what it tells stays true until the target runs again.
 */
static const unsigned char zero_page[PAGE_SIZE];

/* (Readable and writable too: a page that cannot be read is cached as
 * unreadable, not as zeros.) */
static int private_anonymous(const struct cs_mapping *m)
{
	return m->perms[0] == 'r' && mcache_may_change(m) &&
	       m->perms[3] == 'p' &&
	       (!m->path || !strcmp(m->path, "[heap]") ||
		!strcmp(m->path, "[stack]"));
}

/* What the backend says of a window of pages of one mapping. */
struct written_window {
	uint64_t start;           /* first page; n 0: none asked yet */
	size_t n;
	int known;                /* the backend could tell */
	unsigned char bits[MEMSRC_RESIDENT_MAX];
};

/* Does page (in mapping m) read as zeros because the target never wrote
 * it? */
static int unwritten(struct memsrc *ms, const struct cs_mapping *m,
		     uint64_t page, struct written_window *w)
{
	if (!ms->ops->resident || !private_anonymous(m))
		return 0;
	if (!w->n || page < w->start || page - w->start >= w->n * PAGE_SIZE) {
		/* Past the mapping too: 2,000 thread stacks are as many
		 * mappings. */
		uint64_t left = (UINT64_MAX - page) / PAGE_SIZE + 1;

		w->start = page;
		w->n = left < MEMSRC_RESIDENT_MAX ? (size_t)left :
		       MEMSRC_RESIDENT_MAX;
		w->known = ms->ops->resident(ms, page, w->n, w->bits) == 0;
	}
	return w->known && !w->bits[(page - w->start) / PAGE_SIZE];
}

/*
 * Asking during the stop costs too (2,000 thread stacks: 500 calls, 5 ms
 * of the pause), and each page left out of a run of pages to copy costs
 * the copy another piece: worth it only when at least half of what would
 * be copied, and UNWRITTEN_MIN pages or more, were never written when
 * the room was set up ahead.
 */
#define UNWRITTEN_MIN 1024

static int worth_skipping(size_t pages, size_t unwritten)
{
	return unwritten >= UNWRITTEN_MIN && unwritten >= pages / 2;
}

static void decide_skipping(struct memsrc_cache *c, size_t pages,
			    size_t written)
{
	c->skip_unwritten = worth_skipping(pages, pages - written);
}

/* Can enough of the writable mappings' pages (pages of them) read as
 * zeros for worth_skipping()?  Asked of the whole process at once: 7,500
 * pages asked one by one were 2 ms of a 10k-task dump's 35, for none. */
static int may_skip_writable(struct memsrc *ms, size_t pages)
{
	int64_t written;
	uint64_t written_pages;

	if (!ms->ops->resident)
		return 0;
	written = ms->ops->written_bytes ? ms->ops->written_bytes(ms) : -1;
	if (written < 0)
		return 1;
	written_pages = (uint64_t)written / PAGE_SIZE;
	return worth_skipping(pages, written_pages < pages ?
				     pages - (size_t)written_pages : 0);
}

/* One page of mapping m: 1 when it may hold data; else 0, and with
 * cache_them (the target stopped) it is cached as zeros. */
static int sort_out(struct memsrc *ms, const struct cs_mapping *m,
		    uint64_t page, struct written_window *w, int cache_them)
{
	struct memsrc_cache *c = ms->cache;

	if (!m || !unwritten(ms, m, page, w))
		return 1;
	if (cache_them && !mcache_lookup(c, page)) {
		(void)mcache_table_reserve(c, 1);
		mcache_put(c, page, (unsigned char *)zero_page, PAGE_SIZE);
	}
	return 0;
}

/* Of the n sorted pages, those that may hold data (what a capture will
 * copy if the target does not write more first); see sort_out(). */
static size_t sort_out_pages(struct memsrc *ms, const uint64_t *pages,
			     size_t n, int cache_them)
{
	struct written_window *w = xcalloc(1, sizeof(*w));
	const struct cs_mapping *m = NULL;
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		if (!m || pages[i] < m->start || pages[i] >= m->end)
			m = memsrc_find_mapping(ms, pages[i]);
		count += (size_t)sort_out(ms, m, pages[i], w, cache_them);
	}
	free(w);
	return count;
}

/* The same for every page of the writable mappings. */
static size_t sort_out_writable(struct memsrc *ms, int cache_them)
{
	struct written_window *w = xcalloc(1, sizeof(*w));
	size_t i, count = 0;
	uint64_t page;

	/* Bounded by the writable pages, which callers bound. */
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i];

		if (!mcache_may_change(m))
			continue;
		for (page = m->start & PAGE_MASK; page < m->end;
		     page += PAGE_SIZE)
			count += (size_t)sort_out(ms, m, page, w, cache_them);
	}
	free(w);
	return count;
}

/*
 * The blocks of the used pages, sorted, then their pages in order: one
 * entry per used page goes through the sort, not PLAN_BLOCK, and the
 * pages come out sorted and unique (thousands of threads each used a
 * page or two: 40,000 entries sorted, most of them repeats).
 */
static void plan_blocks(struct memsrc *ms, uint64_t *bases, size_t nbases)
{
	const struct cs_mapping *m = NULL;
	size_t i, p;

	pages_sort(bases, &nbases);
	for (i = 0; i < nbases; i++) {
		for (p = 0; p < PLAN_BLOCK; p++) {
			uint64_t page = bases[i] + p * PAGE_SIZE;

			if (!m || page < m->start || page >= m->end)
				m = memsrc_find_mapping(ms, page);
			if (m && mcache_may_change(m))
				plan_push(ms->cache, page);
		}
	}
}

size_t memsrc_plan_learn(struct memsrc *ms)
{
	struct memsrc_cache *c = ms->cache;
	const uint64_t block = PLAN_BLOCK * PAGE_SIZE;
	size_t i, nbases = 0, before = c->nplan;
	uint64_t *bases = xmallocarray(c->cap ? c->cap : 1, sizeof(*bases));

	for (i = 0; i < c->cap; i++) {
		uint64_t page = c->table[i].key & PAGE_MASK;
		const struct cs_mapping *m;

		if (!c->table[i].key || !c->table[i].used)
			continue;
		m = memsrc_find_mapping(ms, page);
		if (!m || !mcache_may_change(m))
			continue;
		bases[nbases++] = page - page % block;
		c->plan_used = xgrow(c->plan_used, &c->aplan_used,
				     c->nplan_used + 1, sizeof(*c->plan_used));
		c->plan_used[c->nplan_used++] = page;
	}
	plan_blocks(ms, bases, nbases);
	free(bases);
	/* A plan learnt before (a round that missed pages) is merged in. */
	if (before)
		plan_sort(c);
	else
		c->plan_sorted = 1;
	/* Here, not in memsrc_plan_trim_stacks(), which runs in the pause. */
	pages_sort(c->plan_used, &c->nplan_used);
	/* Room for the capture now, so that the stop does not also wait
	 * for coroscope's own new memory (none for pages the target never
	 * wrote: they are not copied); the stop drops the cached pages, not
	 * the slabs, so the pages this pass filled are used again. */
	if (c->nplan <= CACHE_MAX_PAGES / 2) {
		size_t written = sort_out_pages(ms, c->plan, c->nplan, 0);

		decide_skipping(c, c->nplan, written);
		mcache_reserve(c, c->skip_unwritten ? written : c->nplan);
		(void)mcache_table_reserve(c, c->nplan + SHARED_ROOM);
	}
	return c->nplan;
}

struct span {
	uint64_t start, end;
};

size_t memsrc_plan_trim_stacks(struct memsrc *ms)
{
	struct memsrc_cache *c = ms->cache;
	struct span *stacks;
	size_t i, n = 0, s = 0, u = 0, out = 0, before = c->nplan;

	if (!c->nplan || !ms->nthreads)
		return 0;
	/* The stack mappings, sorted by start, once each. */
	stacks = xmallocarray(ms->nthreads, sizeof(*stacks));
	for (i = 0; i < ms->nthreads; i++) {
		const struct cs_mapping *m;

		if (!ms->threads[i].has_regs)
			continue;
		m = memsrc_find_mapping(ms, ms->threads[i].regs.r[CS_REG_RSP]);
		/* Not a heap a thread runs on a stack carved out of (its
		 * other pages are a heap's, which the block is for). */
		if (m && !(m->path && !strcmp(m->path, "[heap]")))
			stacks[n++] = (struct span){ m->start, m->end };
	}
	if (n > 1)
		qsort(stacks, n, sizeof(*stacks), u64_cmp);  /* by start */
	for (i = 0; i < n; i++)
		if (!out || stacks[out - 1].start != stacks[i].start)
			stacks[out++] = stacks[i];
	n = out;
	/* One pass over the three sorted lists: a planned page stays
	 * unless it lies in a stack and no read used it. */
	plan_sort(c);
	for (i = 0, out = 0; i < c->nplan; i++) {
		uint64_t page = c->plan[i];

		while (s < n && stacks[s].end <= page)
			s++;
		while (u < c->nplan_used && c->plan_used[u] < page)
			u++;
		if (s < n && page >= stacks[s].start &&
		    (u == c->nplan_used || c->plan_used[u] != page))
			continue;
		c->plan[out++] = page;
	}
	c->nplan = out;
	free(stacks);
	return before - out;
}

void memsrc_reserve_all(struct memsrc *ms, int ahead)
{
	uint64_t pages = memsrc_writable_bytes(ms) / PAGE_SIZE;
	size_t count, want;

	if (pages > CACHE_MAX_PAGES / 2)
		return;
	count = may_skip_writable(ms, (size_t)pages) ?
		sort_out_writable(ms, 0) : (size_t)pages;
	decide_skipping(ms->cache, (size_t)pages, count);
	want = ms->cache->skip_unwritten ? count : (size_t)pages;
	if (ahead)
		mcache_reserve_start(ms->cache, want);
	else
		mcache_reserve(ms->cache, want);
	/* Entries for the unwritten pages too (they take no slab room). */
	(void)mcache_table_reserve(ms->cache, (size_t)pages + SHARED_ROOM);
}

void memsrc_reserve_wait(struct memsrc *ms)
{
	mcache_reserve_wait(ms->cache);
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
	       !mcache_lookup(c, c->plan[i + run]))
		run++;
	return run;
}

/*
 * The copy: the reads are laid out first (every changeable mapping's, or
 * the plan's runs), each with its room in the slabs, in order, then made
 * with the backend's read_runs, many runs to a call, and the pages read
 * whole are cached in order; capture_all() or capture_plan() then reads
 * whatever came short one read at a time.  The kernel copies page by
 * page (pin the target's page, copy it into coroscope's, fault that in
 * if it is new): one thread copied a 10k-task target's 30 MB in ~7.5 ms
 * of its stop while the second core was idle, so with two CPUs and
 * enough to copy, a second thread copies too.
 *
 * The reads go in chunks of about CHUNK_PAGES: the stopping thread takes
 * them from the front, the helper from the back, until they meet.  A
 * helper that starts late (its vCPU must be woken: 0.1-8 ms here) or is
 * held up leaves its share to the other, which then waits at the join
 * for one chunk at most; halves fixed in advance made it wait for the
 * helper's whole half (up to 8 ms of a 5 ms copy).  From the two ends,
 * the threads do not copy neighbouring pages at the same time.
 */
#define PARALLEL_MIN_PAGES 1024   /* 4 MiB: less is not worth a thread */
#define CHUNK_PAGES 256           /* 1 MiB, ~0.15 ms of copying */

struct copy_job {
	uint64_t page;
	size_t n;
	unsigned char *buf;
	long got;
};

/* The chunks, shared by the two threads. */
struct copy_chunks {
	struct memsrc *ms;
	struct copy_job *jobs;
	size_t *first;            /* chunk k: jobs first[k] .. first[k + 1] */
	size_t nchunks;
	_Atomic unsigned char *taken;
};

/* One thread's side. */
struct copy_side {
	struct copy_chunks *cc;
	int from_back;
	size_t calls;
};

/* Make the reads of jobs[0..n), MEMSRC_RUNS_MAX to a call, with the
 * caller's runs and bufs (MEMSRC_RUNS_MAX each).  A job not read whole
 * keeps got -1; the call's next job starts the next call.  The calls
 * made. */
static size_t copy_jobs(struct memsrc *ms, struct copy_job *jobs, size_t n,
			struct memsrc_run *runs, unsigned char **bufs)
{
	size_t i = 0, calls = 0;

	/* Each call settles at least its first job: bounded by n. */
	while (i < n) {
		size_t k, b = 0;
		long got;

		for (k = i; k < n && b < MEMSRC_RUNS_MAX; k++, b++) {
			runs[b].addr = jobs[k].page;
			runs[b].len = jobs[k].n * PAGE_SIZE;
			bufs[b] = jobs[k].buf;
		}
		got = ms->ops->read_runs(ms, runs, bufs, b);
		calls++;
		if (got < 0)
			break;
		for (k = 0; k < b && (uint64_t)got >= runs[k].len; k++) {
			jobs[i + k].got = (long)runs[k].len;
			got -= (long)runs[k].len;
		}
		i += k < b ? k + 1 : b;
	}
	return calls;
}

/* Take chunks from one end until one is found taken: the other side,
 * which takes them from the other end, has taken the rest. */
static void *copy_side(void *arg)
{
	struct copy_side *side = arg;
	struct copy_chunks *cc = side->cc;
	/* On the heap: a helper thread's stack may be small. */
	struct memsrc_run *runs = xmallocarray(MEMSRC_RUNS_MAX, sizeof(*runs));
	unsigned char **bufs = xmallocarray(MEMSRC_RUNS_MAX, sizeof(*bufs));
	size_t i;

	/* Bounded by the chunks. */
	for (i = 0; i < cc->nchunks; i++) {
		size_t k = side->from_back ? cc->nchunks - 1 - i : i;

		if (atomic_exchange_explicit(&cc->taken[k], 1,
					     memory_order_relaxed))
			break;
		side->calls += copy_jobs(cc->ms, cc->jobs + cc->first[k],
					 cc->first[k + 1] - cc->first[k],
					 runs, bufs);
	}
	free(runs);
	free(bufs);
	return NULL;
}

/* Group jobs[0..n) into chunks of CHUNK_PAGES or more pages (and at most
 * MEMSRC_RUNS_MAX jobs): *nchunks of them, first[] of nchunks + 1. */
static size_t *chunk_jobs(const struct copy_job *jobs, size_t n,
			  size_t *nchunks)
{
	size_t *first = xmallocarray(n + 1, sizeof(*first));
	size_t i, k = 0, pages = 0;

	for (i = 0; i < n; i++) {
		if (i == 0 || pages >= CHUNK_PAGES ||
		    i - first[k - 1] >= MEMSRC_RUNS_MAX) {
			first[k++] = i;
			pages = 0;
		}
		pages += jobs[i].n;
	}
	first[k] = n;
	*nchunks = k;
	return first;
}

static void push_job(struct copy_job **jobs, size_t *alloc, size_t *n,
		     size_t *pages, uint64_t page, size_t run)
{
	*jobs = xgrow(*jobs, alloc, *n + 1, sizeof(**jobs));
	(*jobs)[*n].page = page;
	(*jobs)[*n].n = run;
	(*n)++;
	*pages += run;
}

/* The reads of every changeable page not cached yet, CLUSTER_MAX pages
 * at most each, within a mapping: *n of them, *pages in all. */
static struct copy_job *lay_out_all(struct memsrc *ms, size_t *n,
				    size_t *pages)
{
	struct memsrc_cache *c = ms->cache;
	struct copy_job *jobs = NULL;
	size_t alloc = 0, i;

	*n = *pages = 0;
	for (i = 0; i < ms->nmaps; i++) {
		const struct cs_mapping *m = &ms->maps[i];
		uint64_t page;

		if (!mcache_may_change(m))
			continue;
		/* Each round moves page on by at least one: bounded. */
		for (page = m->start & PAGE_MASK; page < m->end;) {
			size_t run = 0;

			while (run < CLUSTER_MAX &&
			       page + run * PAGE_SIZE < m->end &&
			       !mcache_lookup(c, page + run * PAGE_SIZE))
				run++;
			if (!run) {
				page += PAGE_SIZE;
				continue;
			}
			push_job(&jobs, &alloc, n, pages, page, run);
			page += run * PAGE_SIZE;
		}
	}
	return jobs;
}

/* The reads of the planned pages not cached yet: its runs. */
static struct copy_job *lay_out_plan(struct memsrc *ms, size_t *n,
				     size_t *pages)
{
	struct memsrc_cache *c = ms->cache;
	struct copy_job *jobs = NULL;
	size_t alloc = 0, i = 0, run;

	*n = *pages = 0;
	/* Each round moves i on by at least one: bounded by the plan. */
	while (i < c->nplan) {
		/* Cached, or unmapped since the plan was learnt (left to
		 * capture_plan(), which caches it as unreadable). */
		if (mcache_lookup(c, c->plan[i]) ||
		    !memsrc_find_mapping(ms, c->plan[i])) {
			i++;
			continue;
		}
		run = plan_run(c, i);
		push_job(&jobs, &alloc, n, pages, c->plan[i], run);
		i += run;
	}
	return jobs;
}

/*
 * Room for every read, handed out now, in order.  A read that does not
 * fit in what is left of a slab is split there: moved whole to the next
 * slab, it would leave that tail unused, and the room handed out would
 * run past the pages mcache_reserve() faulted in before the stop (new
 * pages faulted in, even a new slab mapped, during the pause: 237 pages
 * and a sixth slab for 10k tasks).  So the room ends exactly as many
 * pages on as the reads have.
 */
static struct copy_job *fit_to_slabs(struct memsrc_cache *c,
				     struct copy_job *jobs, size_t *n)
{
	struct copy_job *out = NULL;
	size_t alloc = 0, nout = 0, pages = 0, i;

	for (i = 0; i < *n; i++) {
		uint64_t page = jobs[i].page;
		size_t left = jobs[i].n;

		/* Each round places at least one page: bounded by the job. */
		while (left) {
			size_t room = mcache_slab_left(c);
			size_t take = room && room < left ? room : left;

			push_job(&out, &alloc, &nout, &pages, page, take);
			out[nout - 1].buf = mcache_slab_room(c, take);
			out[nout - 1].got = -1;
			c->used += take;
			page += take * PAGE_SIZE;
			left -= take;
		}
	}
	free(jobs);
	*n = nout;
	return out;
}

/* Copy what lay_out (lay_out_all or lay_out_plan) lays out, on two
 * threads when there are two CPUs and enough of it. */
static void copy_batched(struct memsrc *ms,
			 struct copy_job *(*lay_out)(struct memsrc *,
						     size_t *, size_t *))
{
	struct memsrc_cache *c = ms->cache;
	struct copy_chunks cc;
	struct copy_side sides[2];
	struct copy_job *jobs;
	unsigned char probe[PAGE_SIZE];
	unsigned char *probe_buf = probe;
	struct memsrc_run probe_run;
	size_t n, pages, i, p;
	struct cs_job *helper;
	int threaded = 0, two;

	if (!ms->ops->read_runs)
		return;
	jobs = lay_out(ms, &n, &pages);
	/* The copy shares the cache's limit with everything else. */
	if (!n || c->npages + pages > CACHE_MAX_PAGES / 2) {
		free(jobs);
		return;
	}
	/* A backend that cannot read this way now (live: reading through
	 * /proc/PID/mem) would leave every page to be read again, into
	 * slab room past what was reserved: one page tells. */
	probe_run.addr = jobs[0].page;
	probe_run.len = PAGE_SIZE;
	if (ms->ops->read_runs(ms, &probe_run, &probe_buf, 1) < 0) {
		free(jobs);
		return;
	}
	two = pages >= PARALLEL_MIN_PAGES && cs_cpus() >= 2;
	jobs = fit_to_slabs(c, jobs, &n);
	mcache_slab_note_used(c);
	(void)mcache_table_reserve(c, pages + SHARED_ROOM);
	cc.ms = ms;
	cc.jobs = jobs;
	cc.first = chunk_jobs(jobs, n, &cc.nchunks);
	cc.taken = xcalloc(cc.nchunks, sizeof(*cc.taken));
	sides[0] = (struct copy_side){ &cc, 0, 0 };
	sides[1] = (struct copy_side){ &cc, 1, 0 };
	if (two)
		threaded = cs_job_start(&helper, copy_side, &sides[1],
					   0) == 0;
	copy_side(&sides[0]);
	if (threaded)
		(void)cs_job_join(helper);
	ms->stats.reads += sides[0].calls + sides[1].calls;
	free(cc.first);
	free((void *)cc.taken);
	for (i = 0; i < n; i++) {
		/* A read that came short is made again by the caller,
		 * which counts its bytes then. */
		if (jobs[i].got != (long)(jobs[i].n * PAGE_SIZE))
			continue;
		ms->stats.bytes_read += (uint64_t)jobs[i].got;
		for (p = 0; p < jobs[i].n; p++)
			mcache_put(c, jobs[i].page + p * PAGE_SIZE,
				   jobs[i].buf + p * PAGE_SIZE, PAGE_SIZE);
		c->npages += jobs[i].n;
	}
	free(jobs);
}

/* Copy the planned pages: runs of consecutive pages, many runs to a
 * backend call where the backend can, else one run (up to CLUSTER_MAX
 * pages) each. */
static int capture_plan(struct memsrc *ms, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t i = 0;
	int ret = 0;

	if (c->skip_unwritten)
		(void)sort_out_pages(ms, c->plan, c->nplan, 1);
	copy_batched(ms, lay_out_plan);
	/* Each round moves past a cached page or caches plan[i] (a fill
	 * always caches its first page, if only as unreadable): bounded.  A
	 * fill may stop short (at a mapping's end, an unreadable page): the
	 * rest of its run is filled in later rounds. */
	while (i < c->nplan && ret == 0) {
		if (mcache_lookup(c, c->plan[i])) {
			i++;
			continue;
		}
		ret = mcache_fill_exact(ms, c->plan[i], plan_run(c, i), err);
	}
	return ret;
}

/* Copy every changeable mapping. */
static int capture_all(struct memsrc *ms, struct cs_err *err)
{
	struct memsrc_cache *c = ms->cache;
	size_t i;
	int ret = 0;

	if (c->skip_unwritten)
		(void)sort_out_writable(ms, 1);
	copy_batched(ms, lay_out_all);
	/* Fill the cache directly, in the largest reads a fill makes
	 * (slabs are sized for them), copying nothing out. */
	for (i = 0; i < ms->nmaps && ret == 0; i++) {
		const struct cs_mapping *m = &ms->maps[i];
		uint64_t page;

		if (!mcache_may_change(m))
			continue;
		/* Each round moves on a page or fills it: bounded.  A page
		 * that cannot be read is cached as unreadable and skipped. */
		for (page = m->start & PAGE_MASK; page < m->end && ret == 0;) {
			if (mcache_lookup(c, page)) {
				page += PAGE_SIZE;
				continue;
			}
			ret = mcache_fill_exact(ms, page, CLUSTER_MAX, err);
			if (ret == 0 && !mcache_lookup(c, page))
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
