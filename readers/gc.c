#include "readers/gc.h"

#include <stdlib.h>
#include <string.h>

#include "common/addrmap.h"
#include "common/strbuf.h"
#include "readers/fields.h"
#include "readers/gc_tail.h"
#include "common/util.h"
#include "common/banned.h"

/* A generation count this large means we are reading garbage. */
#define MAX_GENERATIONS 3

struct walk {
	struct pyproc *py;
	py_gc_visitor visit;
	void *data;
	uint64_t interp;          /* whose lists are walked, 0 unknown */
	uint64_t visited;
	uint64_t max;             /* objects there can be (walk_max()) */
	uint64_t base;            /* mimalloc debug header bytes, 0 or 16 */
	int stop;
};

/*
 * The most objects a walk can meet: they do not overlap, each takes 16
 * bytes or more, and all are in memory that can be written (their
 * headers are).  (A list cannot loop without passing its head: the
 * check of prev pointers stops it where it comes back.)
 */
static uint64_t walk_max(const struct pyproc *py)
{
	uint64_t n = memsrc_writable_bytes(py->ms) / 16;

	return n && n < PY_GC_MAX_OBJECTS ? n : PY_GC_MAX_OBJECTS;
}

static int too_many(const struct walk *w, struct cs_err *err)
{
	return cs_fail(err, CS_ERR_MEMORY,
		       "more than %llu GC objects: a corrupt list?",
		       (unsigned long long)w->max);
}

/*
 * Objects of one list walked before a second thread walks it from its
 * tail (readers/gc_tail.h): a thread costs ~0.1 ms to start.  Only a
 * captured source: the two threads then mostly share pages found in the
 * cache, and a read of the running target is no faster twice.
 */
#define TAIL_MIN 8192

static struct gc_tail *start_tail(struct walk *w, uint64_t head)
{
	struct pyproc *py = w->py;
	struct gc_tail *t;
	uint64_t tail;

	if (py->ms->frozen == MEMSRC_LIVE || cs_cpus() < 2 ||
	    py_field_u64(py, head, py->layout.gc_head_prev, &tail, NULL) < 0)
		return NULL;
	memsrc_share(py->ms, 1);
	t = gc_tail_start(py->ms, &py->layout, head, tail & GC_PTR_MASK,
			  (size_t)(w->max - w->visited));
	if (!t)
		memsrc_share(py->ms, 0);
	return t;
}

/* The tail walker's objects from met on, visited after the forward
 * walk's, in the list's order. */
static int finish_tail(struct walk *w, struct gc_tail *t, uint64_t met,
		       struct cs_err *err)
{
	size_t hsize = (size_t)w->py->layout.gc_head_size, n, i;
	struct gc_rec *recs;
	int ret = 0;

	gc_tail_finish(t, met, &recs, &n);
	memsrc_share(w->py->ms, 0);
	for (i = 0; i < n && !w->stop; i++) {
		if (++w->visited > w->max) {
			ret = too_many(w, err);
			break;
		}
		if (w->visit(recs[i].node + hsize, recs[i].type, w->interp,
			     w->data))
			w->stop = 1;
	}
	free(recs);
	return ret;
}

/* Walk one circular list from its head. */
static int walk_list(struct walk *w, uint64_t head, struct cs_err *err)
{
	const struct py_layout *L = &w->py->layout;
	size_t hsize = (size_t)L->gc_head_size, count = 0;
	struct gc_node_at at;
	struct gc_node nd;
	struct gc_tail *tail = NULL;
	uint64_t node, prev, met = 0;
	int ret;

	ret = py_field_u64(w->py, head, L->gc_head_next, &node, err);
	if (ret < 0)
		return ret;
	gc_node_at_init(&at, L);
	node &= GC_PTR_MASK;
	prev = head;
	ret = 0;
	while (node && node != head && !w->stop) {
		uint64_t obj = node + hsize;

		ret = gc_read_node_fast(w->py->ms, L, &at, node, &nd, err);
		if (ret < 0)
			break;
		/* Each node must point back at the one we came from: this
		 * catches a list being changed under us and any loop that does
		 * not pass through the head. */
		if ((nd.prev & GC_PTR_MASK) != prev) {
			ret = cs_fail(err, CS_ERR_MEMORY,
				      "GC list changed or corrupt at 0x%llx",
				      (unsigned long long)node);
			break;
		}
		if (tail && gc_tail_met(tail, node, prev)) {
			met = node;  /* it and the rest: the tail walker's */
			break;
		}
		if (++w->visited > w->max) {
			ret = too_many(w, err);
			break;
		}
		prev = node;
		if (w->visit(obj, nd.type, w->interp, w->data))
			w->stop = 1;
		node = nd.next & GC_PTR_MASK;
		/* Worth it only with more of the list to come. */
		if (++count == TAIL_MIN && node != head && !w->stop &&
		    w->visited < w->max)
			tail = start_tail(w, head);
	}
	if (tail) {
		/* After an error or a stop, nothing of the tail is wanted
		 * (and finish_tail() then visits nothing: 0). */
		int tret = finish_tail(w, tail, ret < 0 || w->stop ? 0 : met,
				       err);

		if (ret == 0)
			ret = tret;
	}
	return ret;
}

/* Address of struct _gc_runtime_state for one interpreter, or 0. */
static uint64_t gc_state(struct pyproc *py, uint64_t interp)
{
	const struct py_layout *L = &py->layout;

	if (L->is_gc >= 0)
		return interp + (uint64_t)L->is_gc;
	if (L->rt_gc >= 0 && py->runtime)
		return py->runtime + (uint64_t)L->rt_gc;
	return 0;
}

static int walk_state(struct walk *w, uint64_t generations,
		      uint64_t permanent, struct cs_err *err)
{
	const struct py_layout *L = &w->py->layout;
	int i, ret = 0;

	for (i = 0; i < MAX_GENERATIONS && ret == 0 && !w->stop; i++)
		ret = walk_list(w, generations +
				(uint64_t)(i * L->gc_generation_size) +
				(uint64_t)L->gc_gen_head, err);
	if (ret == 0 && permanent && !w->stop)
		ret = walk_list(w, permanent + (uint64_t)L->gc_gen_head, err);
	return ret;
}

/*
 * Free-threaded builds (layout gc_kind PY_GC_MIMALLOC) keep no lists: GC
 * objects are the allocated blocks of two mimalloc heaps per thread, plus
 * the segments that exited threads abandoned.  The walk mirrors CPython's
 * gc_visit_heaps() read-only: a block is free when it is on one of its
 * page's free lists or the heap's delayed-free list; every other block
 * below the page's capacity holds an object, GC-tracked if bit 0 of
 * ob_gc_bits is set.
 */
#define MI_MAX_THREADS 65536      /* thread states per interpreter */
#define MI_MAX_PAGES (1u << 22)   /* pages per heap (16 TiB of 4 KiB) */
#define MI_MAX_SEGMENTS (1u << 20)/* abandoned segments */
#define MI_MAX_DELAYED (1u << 22) /* delayed-free blocks per heap */
#define MI_MAX_HEAP_BYTES 65536   /* sizeof(mi_heap_t) we accept */
#define MI_HUGE_BLOCK (1ull << 31)/* xblock_size of a huge page */
#define MI_BLOCK_BITS 65536       /* capacity is a uint16 */
#define OB_GC_TRACKED 1

struct mi_walk {
	struct walk *w;
	uint64_t heap;            /* the owning heap, 0 for abandoned pages */
	uint64_t obj_off;         /* object start within its block */
	struct addrmap delayed;   /* the heap's delayed-free blocks */
	uint8_t freebits[MI_BLOCK_BITS / 8];
};

static int mi_changed(uint64_t addr, const char *what, struct cs_err *err)
{
	return cs_fail(err, CS_ERR_MEMORY,
		       "mimalloc %s at 0x%llx changed or corrupt", what,
		       (unsigned long long)addr);
}

/* Mark the blocks of one free list; its length is returned in *n. */
static int mi_mark_free(struct mi_walk *m, uint64_t block, uint64_t start,
			uint64_t bs, unsigned capacity, unsigned *n,
			struct cs_err *err)
{
	int ret;

	*n = 0;
	while (block) {
		uint64_t i;

		if (block < start || (block - start) % bs ||
		    (i = (block - start) / bs) >= capacity || ++*n > capacity)
			return mi_changed(block, "free list", err);
		if (m->freebits[i / 8] & (1u << (i % 8)))
			return mi_changed(block, "free list (a loop)", err);
		m->freebits[i / 8] |= (uint8_t)(1u << (i % 8));
		ret = memsrc_read_u64(m->w->py->ms, block, &block, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Where the blocks of a page are: capacity blocks of bs bytes from start. */
struct mi_span {
	uint64_t start, bs;
	unsigned capacity, used;
};

/*
 * The blocks of the page at `page` (its struct in pb), checked against
 * its segment: 1, 0 when it has none to walk (unused, or a huge page), or
 * a negative status.
 */
static int mi_page_span(struct mi_walk *m, uint64_t page, const uint8_t *pb,
			size_t psize, struct mi_span *s, struct cs_err *err)
{
	struct walk *w = m->w;
	const struct py_layout *L = &w->py->layout;
	uint64_t seg_size = 1ull << L->mi_segment_shift;
	uint64_t seg = (page - 1) & ~(seg_size - 1), slices, idx, entries;
	uint64_t bs = field_u32(pb, psize, L->mi_page_block_size), start, end;
	unsigned capacity = field_u32(pb, psize, L->mi_page_capacity) & 0xffff;
	unsigned used = field_u32(pb, psize, L->mi_page_used);
	unsigned slice_count = field_u32(pb, psize, L->mi_page_slice_count);
	int ret;

	memset(s, 0, sizeof(*s));
	if (!used)
		return 0;
	/* A huge page holds one block bigger than any GC object's header
	 * needs: objects that big are arrays of other heaps. */
	if (bs >= MI_HUGE_BLOCK)
		return 0;
	slices = seg + (uint64_t)L->mi_seg_slices;
	if (page < slices || (page - slices) % (uint64_t)L->mi_page_size)
		return mi_changed(page, "page", err);
	idx = (page - slices) / (uint64_t)L->mi_page_size;
	ret = py_field_u64(w->py, seg, L->mi_seg_slice_entries, &entries, err);
	if (ret < 0)
		return ret;
	if (idx >= entries || slice_count == 0 ||
	    idx + slice_count > entries || bs == 0 || used > capacity ||
	    capacity > field_u32(pb, psize, L->mi_page_reserved) ||
	    (uint64_t)capacity * bs > (uint64_t)slice_count << L->mi_slice_shift)
		return mi_changed(page, "page", err);
	start = seg + (idx << L->mi_slice_shift);
	if (bs >= 8 && bs <= 64)
		start += 3 * bs;
	else if (bs >= 8 && bs <= 512)
		start += bs;
	end = start + (uint64_t)capacity * bs;
	if (end > seg + ((idx + slice_count) << L->mi_slice_shift))
		return mi_changed(page, "page", err);
	s->start = start;
	s->bs = bs;
	s->capacity = capacity;
	s->used = used;
	return 1;
}

/* Mark the free blocks of a page in m->freebits, and check its counts. */
static int mi_page_free(struct mi_walk *m, uint64_t page, const uint8_t *pb,
			size_t psize, const struct mi_span *s,
			struct cs_err *err)
{
	const struct py_layout *L = &m->w->py->layout;
	unsigned n_free, n_local, n_thread;
	int ret;

	memset(m->freebits, 0, (s->capacity + 7) / 8);
	ret = mi_mark_free(m, field_u64(pb, psize, L->mi_page_free), s->start,
			   s->bs, s->capacity, &n_free, err);
	if (ret == 0)
		ret = mi_mark_free(m, field_u64(pb, psize, L->mi_page_local_free),
				   s->start, s->bs, s->capacity, &n_local, err);
	if (ret == 0)
		ret = mi_mark_free(m, field_u64(pb, psize, L->mi_page_thread_free) &
				   ~(uint64_t)3, s->start, s->bs, s->capacity,
				   &n_thread, err);
	if (ret < 0)
		return ret;
	/* Blocks on the thread-free and delayed lists still count in used;
	 * the two local lists and used must add up to the capacity. */
	if (s->used + n_free + n_local != s->capacity)
		return mi_changed(page, "page counts", err);
	return 0;
}

/* Visit the GC-tracked objects of the blocks not marked free. */
static int mi_visit_blocks(struct mi_walk *m, const struct mi_span *s,
			   struct cs_err *err)
{
	struct walk *w = m->w;
	const struct py_layout *L = &w->py->layout;
	uint8_t ob[64];
	unsigned i, hdr;
	int ret;

	hdr = (unsigned)(L->ob_type > L->ob_gc_bits ? L->ob_type + 8 :
			 L->ob_gc_bits + 1);
	if (hdr > sizeof(ob) || m->obj_off + hdr > s->bs)
		return 0;  /* blocks too small to hold an object */
	for (i = 0; i < s->capacity && !w->stop; i++) {
		uint64_t block = s->start + (uint64_t)i * s->bs;
		uint64_t obj = block + m->obj_off;

		if (m->freebits[i / 8] & (1u << (i % 8)))
			continue;
		if (m->delayed.len) {
			int found = 0;

			addrmap_get(&m->delayed, block, &found);
			if (found)
				continue;
		}
		ret = memsrc_read(w->py->ms, obj, ob, hdr, err);
		if (ret < 0)
			return ret;
		if (!(field_u8(ob, hdr, L->ob_gc_bits) & OB_GC_TRACKED))
			continue;
		if (++w->visited > w->max)
			return cs_fail(err, CS_ERR_MEMORY,
				       "more than %llu GC objects: a corrupt heap?",
				       (unsigned long long)w->max);
		if (w->visit(obj, field_u64(ob, hdr, L->ob_type), w->interp,
			     w->data))
			w->stop = 1;
	}
	return 0;
}

static int mi_walk_page(struct mi_walk *m, uint64_t page, const uint8_t *pb,
			size_t psize, struct cs_err *err)
{
	struct mi_span s;
	int ret;

	ret = mi_page_span(m, page, pb, psize, &s, err);
	if (ret <= 0)
		return ret;
	ret = mi_page_free(m, page, pb, psize, &s, err);
	if (ret < 0)
		return ret;
	return mi_visit_blocks(m, &s, err);
}

/* Read one page struct and walk it. */
static int mi_page(struct mi_walk *m, uint64_t page, uint64_t *next,
		   struct cs_err *err)
{
	const struct py_layout *L = &m->w->py->layout;
	uint8_t pb[PY_LAYOUT_MAX_STRUCT];
	size_t psize = (size_t)L->mi_page_size;
	int ret;

	if (psize > sizeof(pb))
		CS_BUG("mi_page_t of %zu bytes", psize);
	ret = memsrc_read(m->w->py->ms, page, pb, psize, err);
	if (ret < 0)
		return ret;
	/* A thread's page names its heap (CPython's heap visit asserts it). */
	if (m->heap && field_u64(pb, psize, L->mi_page_heap) != m->heap)
		return mi_changed(page, "page heap", err);
	*next = field_u64(pb, psize, L->mi_page_next);
	return mi_walk_page(m, page, pb, psize, err);
}

static int mi_walk_heap(struct mi_walk *m, uint64_t heap, struct cs_err *err)
{
	struct walk *w = m->w;
	const struct py_layout *L = &w->py->layout;
	size_t hsize = (size_t)L->mi_heap_size;
	uint64_t page, block, npages, seen = 0;
	uint8_t *hb;
	int q, ret = 0;

	if (hsize > MI_MAX_HEAP_BYTES)
		CS_BUG("mi_heap_t of %zu bytes", hsize);
	hb = xmalloc(hsize);
	ret = memsrc_read(w->py->ms, heap, hb, hsize, err);
	if (ret < 0)
		goto out;
	npages = field_u64(hb, hsize, L->mi_heap_page_count);
	if (npages > MI_MAX_PAGES) {
		ret = mi_changed(heap, "heap", err);
		goto out;
	}
	m->heap = heap;
	/* Blocks freed by other threads that this one has not taken back. */
	for (block = field_u64(hb, hsize, L->mi_heap_delayed_free); block;) {
		if (m->delayed.len >= MI_MAX_DELAYED ||
		    !addrmap_add(&m->delayed, block)) {
			ret = mi_changed(heap, "delayed-free list", err);
			goto out;
		}
		ret = memsrc_read_u64(w->py->ms, block, &block, err);
		if (ret < 0)
			goto out;
	}
	for (q = 0; q < L->mi_heap_queues && !w->stop; q++) {
		page = field_u64(hb, hsize, L->mi_heap_pages +
				 q * L->mi_queue_size + L->mi_queue_first);
		while (page && !w->stop) {
			if (++seen > npages) {
				ret = mi_changed(heap, "heap page count", err);
				goto out;
			}
			ret = mi_page(m, page, &page, err);
			if (ret < 0)
				goto out;
		}
	}
out:
	addrmap_release(&m->delayed);
	addrmap_init(&m->delayed);
	m->heap = 0;
	free(hb);
	return ret;
}

/* The pages of one abandoned segment: slices that start a page in use. */
static int mi_walk_segment(struct mi_walk *m, uint64_t seg, struct cs_err *err)
{
	const struct py_layout *L = &m->w->py->layout;
	uint8_t pb[PY_LAYOUT_MAX_STRUCT];
	size_t psize = (size_t)L->mi_page_size;
	uint64_t entries, slice, end;
	int ret;

	ret = py_field_u64(m->w->py, seg, L->mi_seg_slice_entries, &entries, err);
	if (ret < 0)
		return ret;
	if (!entries || entries > (1ull << (L->mi_segment_shift -
					    L->mi_slice_shift)))
		return mi_changed(seg, "segment", err);
	slice = seg + (uint64_t)L->mi_seg_slices;
	end = slice + entries * psize;
	/* slices[0] describes the segment's own header slices. */
	while (slice < end && !m->w->stop) {
		unsigned count, tag;

		ret = memsrc_read(m->w->py->ms, slice, pb, psize, err);
		if (ret < 0)
			return ret;
		count = field_u32(pb, psize, L->mi_page_slice_count);
		if (count == 0)
			return mi_changed(slice, "segment slice", err);
		tag = (field_u32(pb, psize, L->mi_page_tag_bit / 8) >>
		       (L->mi_page_tag_bit % 8)) & 0xf;
		if (slice != seg + (uint64_t)L->mi_seg_slices &&
		    field_u32(pb, psize, L->mi_page_block_size) &&
		    (tag == (unsigned)L->mi_heap_gc ||
		     tag == (unsigned)L->mi_heap_gc_pre)) {
			m->obj_off = (tag == (unsigned)L->mi_heap_gc_pre ?
				      (uint64_t)L->mi_gc_pre_size : 0) + m->w->base;
			ret = mi_walk_page(m, slice, pb, psize, err);
			if (ret < 0)
				return ret;
		}
		slice += (uint64_t)count * psize;
	}
	return 0;
}

static int mi_walk_abandoned(struct mi_walk *m, uint64_t seg,
			     struct cs_err *err)
{
	const struct py_layout *L = &m->w->py->layout;
	unsigned n = 0;
	int ret;

	while (seg && !m->w->stop) {
		uint64_t owner;

		if (++n > MI_MAX_SEGMENTS || seg & ((1ull << L->mi_segment_shift) - 1))
			return mi_changed(seg, "abandoned segment list", err);
		/* An abandoned segment belongs to no thread (mimalloc clears
		 * thread_id when it abandons one). */
		ret = py_field_u64(m->w->py, seg, L->mi_seg_thread_id, &owner, err);
		if (ret < 0)
			return ret;
		if (owner)
			return mi_changed(seg, "abandoned segment", err);
		ret = mi_walk_segment(m, seg, err);
		if (ret == 0)
			ret = py_field_u64(m->w->py, seg, L->mi_seg_abandoned_next,
					   &seg, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int mi_walk_interp(struct walk *w, uint64_t interp, struct cs_err *err)
{
	const struct py_layout *L = &w->py->layout;
	struct mi_walk *m = xcalloc(1, sizeof(*m));
	uint64_t ts, pool, seg = 0;
	struct addrmap seen;
	int32_t dbg = 0, init;
	unsigned n = 0;
	int ret;

	m->w = w;
	addrmap_init(&m->delayed);
	addrmap_init(&seen);
	/* PYTHONMALLOC=mimalloc_debug puts a 16-byte header before each
	 * block's payload (Python/gc_free_threading.c gc_visit_heaps). */
	ret = py_field_i32(w->py, w->py->runtime, L->rt_allocators_debug, &dbg,
			   err);
	w->base = dbg ? 16 : 0;
	if (ret >= 0)
		ret = py_field_u64(w->py, interp, L->is_tstate_head, &ts, err);
	while (ret >= 0 && ts && !w->stop) {
		int h;

		if (++n > MI_MAX_THREADS || !addrmap_add(&seen, ts)) {
			ret = mi_changed(ts, "thread list", err);
			break;
		}
		ret = py_field_i32(w->py, ts, L->ts_mi_initialized, &init, err);
		for (h = 0; ret >= 0 && init && h < 2 && !w->stop; h++) {
			int id = h ? L->mi_heap_gc_pre : L->mi_heap_gc;

			m->obj_off = w->base + (h ? (uint64_t)L->mi_gc_pre_size : 0);
			ret = mi_walk_heap(m, ts + (uint64_t)L->ts_mi_heaps +
					   (uint64_t)id * (uint64_t)L->mi_heap_size,
					   err);
		}
		if (ret >= 0)
			ret = py_field_u64(w->py, ts, L->ts_next, &ts, err);
	}
	/* Exited threads' segments wait in the pool until a live thread
	 * reclaims them: both its lists (the head is tagged in its low bits). */
	pool = interp + (uint64_t)L->is_mi_abandoned_pool;
	if (ret >= 0 && !w->stop)
		ret = py_field_u64(w->py, pool, L->mi_pool_abandoned, &seg, err);
	if (ret >= 0)
		ret = mi_walk_abandoned(m, seg & ~((1ull << L->mi_segment_shift) - 1),
					err);
	if (ret >= 0 && !w->stop)
		ret = py_field_u64(w->py, pool, L->mi_pool_visited, &seg, err);
	if (ret >= 0)
		ret = mi_walk_abandoned(m, seg, err);
	addrmap_release(&seen);
	addrmap_release(&m->delayed);
	free(m);
	return ret < 0 ? ret : 0;
}

int py_gc_walk(struct pyproc *py, py_gc_visitor visit, void *data,
	       struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	struct walk w = { py, visit, data, 0, 0, walk_max(py), 0, 0 };
	uint64_t interp, state, gen0;
	struct addrmap seen;
	int n, ret;

	if (py->gc_generation0_var) {
		/* 3.6: one static generations[] array, reached through the
		 * exported pointer to its first head. */
		ret = memsrc_read_u64(py->ms, py->gc_generation0_var, &gen0, err);
		if (ret < 0)
			return ret;
		return walk_state(&w, gen0 - (uint64_t)L->gc_gen_head, 0, err);
	}
	if (L->rt_gc >= 0) {
		/* 3.7, 3.8: one state for the whole runtime. */
		state = gc_state(py, 0);
		if (!state)
			return cs_fail(err, CS_ERR_MEMORY, "no GC state found");
		return walk_state(&w, state + (uint64_t)L->gc_generations,
				  L->gc_permanent_generation >= 0 ?
				  state + (uint64_t)L->gc_permanent_generation : 0,
				  err);
	}
	ret = pyproc_interp_head(py, &interp, err);
	addrmap_init(&seen);
	for (n = 0; ret == 0 && interp && n < 256 && !w.stop; n++) {
		/* a corrupt list must not walk one heap twice */
		if (!addrmap_add(&seen, interp))
			break;
		w.interp = interp;
		/* The one place the table's GC strategy is chosen. */
		if (L->gc_kind == PY_GC_MIMALLOC) {
			ret = mi_walk_interp(&w, interp, err);
		} else {
			state = gc_state(py, interp);
			ret = walk_state(&w, state + (uint64_t)L->gc_generations,
					 L->gc_permanent_generation >= 0 ?
					 state + (uint64_t)L->gc_permanent_generation :
					 0, err);
		}
		if (ret == 0)
			ret = py_field_u64(py, interp, L->is_next, &interp, err);
		ret = ret < 0 ? ret : 0;
	}
	addrmap_release(&seen);
	return ret;
}

struct each {
	const struct py_gc_visit *v;
	size_t n, left;
	unsigned char done[PY_GC_MAX_VISITS];
};

static int visit_each(uint64_t obj, uint64_t type, uint64_t interp,
		      void *data)
{
	struct each *e = data;
	size_t i;

	for (i = 0; i < e->n; i++)
		if (!e->done[i] && e->v[i].fn(obj, type, interp, e->v[i].data)) {
			e->done[i] = 1;
			e->left--;
		}
	return e->left == 0;
}

int py_gc_walk_each(struct pyproc *py, const struct py_gc_visit *v, size_t n,
		    struct cs_err *err)
{
	struct each e;

	if (n > PY_GC_MAX_VISITS)
		CS_BUG("%zu GC visitors", n);
	if (!n)
		return 0;
	/* One visitor (most walks: no greenlets, no trio) needs no
	 * bookkeeping: it is called straight, a call less per object, and
	 * its non-zero stops the walk just as visit_each() would. */
	if (n == 1)
		return py_gc_walk(py, v[0].fn, v[0].data, err);
	memset(&e, 0, sizeof(e));
	e.v = v;
	e.n = e.left = n;
	return py_gc_walk(py, visit_each, &e, err);
}
