/*
 * The GC walk (readers/gc.c) over made-up heaps, the long lists also
 * walked from their tail by a second thread (readers/gc_tail.c): it must
 * visit what a walk on one thread visits, in the same order, and fail
 * where and as that walk fails, whatever the list's length, however the
 * two threads meet, and whatever the visitor stops.
 *
 * The heap is a 3.12 interpreter's: a runtime pointing at one
 * interpreter whose three generations and permanent generation are
 * circular lists of objects scattered over the image in random order.
 * The source is marked captured (what lets the walk take a second
 * thread); with COROSCOPE_TEST_CPUS=1, or marked live, it walks on one.
 */
#include "readers/gc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/memsrc.h"
#include "common/error.h"
#include "readers/layout.h"
#include "readers/pyproc.h"
#include "tests/support/image_memsrc.h"

#include "tests/unit/check.h"

#define BASE IMAGE_BASE
#define OBJ 64            /* bytes per made-up object */
#define HEADER 0x1000     /* the runtime and the interpreter */

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A heap whose biggest generation holds n objects (the others a few);
 * the object at position k of the big list is nodes[k]. */
struct heap {
	struct image im;          /* over data */
	uint8_t *data;
	const struct py_layout *L;
	uint64_t *nodes;          /* the big list's, in list order */
	size_t n;
};

static void put64(struct heap *h, uint64_t addr, uint64_t v)
{
	memcpy(h->data + (addr - BASE), &v, 8);
}

static uint64_t get64(const struct heap *h, uint64_t addr)
{
	uint64_t v;

	memcpy(&v, h->data + (addr - BASE), 8);
	return v;
}

static uint64_t list_head(const struct heap *h, int gen)
{
	const struct py_layout *L = h->L;
	uint64_t state = BASE + 0x100 + (uint64_t)L->is_gc;

	if (gen < 0)
		return state + (uint64_t)L->gc_permanent_generation +
		       (uint64_t)L->gc_gen_head;
	return state + (uint64_t)L->gc_generations +
	       (uint64_t)(gen * L->gc_generation_size) +
	       (uint64_t)L->gc_gen_head;
}

/* Link the objects at v[0..n) into the circular list at head. */
static void link_list(struct heap *h, uint64_t head, const uint64_t *v,
		      size_t n)
{
	const struct py_layout *L = h->L;
	size_t i;

	for (i = 0; i <= n; i++) {
		uint64_t a = i ? v[i - 1] : head, b = i < n ? v[i] : head;

		put64(h, a + (uint64_t)L->gc_head_next, b);
		put64(h, b + (uint64_t)L->gc_head_prev, a);
	}
}

static void heap_make(struct heap *h, size_t n)
{
	const struct py_layout *L = py_layout_for(3, 12, 0);
	size_t slots = n + 16, i;
	uint64_t *all;

	h->L = L;
	h->n = n;
	h->im.size = HEADER + slots * OBJ;
	h->data = calloc(1, h->im.size);
	h->im.data = h->data;
	all = malloc(slots * sizeof(*all));
	h->nodes = malloc((n ? n : 1) * sizeof(*h->nodes));
	if (!h->data || !all || !h->nodes)
		abort();
	/* Objects at shuffled places: list order is not address order. */
	for (i = 0; i < slots; i++)
		all[i] = BASE + HEADER + i * OBJ;
	for (i = slots - 1; i > 0; i--) {
		size_t k = (size_t)(rnd() % (i + 1));
		uint64_t t = all[i];

		all[i] = all[k];
		all[k] = t;
	}
	for (i = 0; i < slots; i++)
		/* the type: a distinct value per object, to check it too */
		put64(h, all[i] + (uint64_t)L->gc_head_size +
			      (uint64_t)L->ob_type, 0x7700000000ull + i);
	put64(h, BASE + (uint64_t)L->rt_interpreters_head, BASE + 0x100);
	memcpy(h->nodes, all, n * sizeof(*all));
	link_list(h, list_head(h, 0), all + n, 5);
	link_list(h, list_head(h, 1), all + n + 5, 3);
	link_list(h, list_head(h, 2), h->nodes, n);
	link_list(h, list_head(h, -1), all + n + 8, 8);
	free(all);
}

struct seen {
	uint64_t *obj, *type;
	size_t n, alloc, stop_at;
};

static int record(uint64_t obj, uint64_t type, uint64_t interp, void *data)
{
	struct seen *s = data;

	(void)interp;
	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 1024;
		s->obj = realloc(s->obj, s->alloc * sizeof(*s->obj));
		s->type = realloc(s->type, s->alloc * sizeof(*s->type));
		if (!s->obj || !s->type)
			abort();
	}
	s->obj[s->n] = obj;
	s->type[s->n++] = type;
	return s->stop_at && s->n == s->stop_at;
}

/* Walk h, captured or live; *s gets the visits; the status is returned
 * and the message copied to msg.  The first `writable` bytes of the image
 * are a writable mapping, the rest a read-only one. */
static int walk(struct heap *h, int captured, size_t writable,
		struct seen *s, char *msg)
{
	struct memsrc *ms = calloc(1, sizeof(*ms));
	uint64_t end = BASE + ((h->im.size + 4095) & ~(size_t)4095);
	struct pyproc py;
	struct cs_err err;
	int ret;

	if (!ms)
		abort();
	memsrc_init(ms, &image_ops, &h->im);
	ms->maps = calloc(2, sizeof(*ms->maps));
	if (!ms->maps)
		abort();
	ms->nmaps = 2;
	ms->maps[0].start = BASE;
	ms->maps[0].end = BASE + writable;
	memcpy(ms->maps[0].perms, "rw-p", 5);
	ms->maps[1].start = BASE + writable;
	ms->maps[1].end = end;
	memcpy(ms->maps[1].perms, "r--p", 5);
	ms->frozen = captured ? MEMSRC_FROZEN_ALL : MEMSRC_LIVE;
	memset(&py, 0, sizeof(py));
	py.ms = ms;
	py.layout = *h->L;
	py.major = 3;
	py.minor = 12;
	py.runtime = BASE;
	addrmap_init(&py.codes);
	addrmap_init(&py.strs);
	addrmap_init(&py.typenames);
	cs_err_init(&err);
	ret = py_gc_walk(&py, record, s, &err);
	snprintf(msg, 256, "%.200s", err.msg);
	pyproc_release(&py);
	memsrc_free(ms);
	return ret;
}

static void free_seen(struct seen *s)
{
	free(s->obj);
	free(s->type);
	memset(s, 0, sizeof(*s));
}

/* The captured walk against the live one (one thread) on h. */
static void same_walk_in(struct heap *h, const char *what, size_t stop_at,
			 size_t writable)
{
	struct seen one = { 0 }, two = { 0 };
	char m1[256], m2[256];
	int r1, r2;

	one.stop_at = two.stop_at = stop_at;
	r1 = walk(h, 0, writable, &one, m1);
	r2 = walk(h, 1, writable, &two, m2);
	CHECK(r1 == r2 && !strcmp(m1, m2), "%s, %zu objects: status %d '%s' "
	      "against %d '%s'", what, h->n, r2, m2, r1, m1);
	CHECK(one.n == two.n &&
	      !memcmp(one.obj, two.obj, one.n * sizeof(*one.obj)) &&
	      !memcmp(one.type, two.type, one.n * sizeof(*one.type)),
	      "%s, %zu objects: %zu visits against %zu, or not the same",
	      what, h->n, two.n, one.n);
	free_seen(&one);
	free_seen(&two);
}

static void same_walk(struct heap *h, const char *what, size_t stop_at)
{
	same_walk_in(h, what, stop_at, (h->im.size + 4095) & ~(size_t)4095);
}

static void heap_free(struct heap *h)
{
	free(h->data);
	free(h->nodes);
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 8191, 8192, 8193, 8300, 20000,
					100000, 400000 };
	/* Under a sanitizer (ThreadSanitizer: `make check-tsan`) the largest
	 * heap takes most of a minute; the others meet the same ways. */
	size_t nsizes = sizeof(sizes) / sizeof(*sizes) -
			(getenv("COROSCOPE_SANITIZED") != NULL);
	size_t i, r;

	for (i = 0; i < nsizes; i++) {
		struct heap h;
		struct seen s = { 0 };
		char msg[256];

		heap_make(&h, sizes[i]);
		CHECK(walk(&h, 1, (h.im.size + 4095) & ~(size_t)4095, &s,
			   msg) == 0 && s.n == sizes[i] + 16,
		      "%zu objects: %zu visited (%s)", sizes[i], s.n, msg);
		free_seen(&s);
		/* Repeated: the two threads meet where timing puts them. */
		for (r = 0; r < (sizes[i] <= 20000 ? 20 : 3); r++)
			same_walk(&h, "whole", 0);
		if (sizes[i] == 20000) {
			/* More objects than 64 KiB of writable memory can
			 * hold: a corrupt list, after 4,096. */
			struct seen e = { 0 };

			CHECK(walk(&h, 1, 65536, &e, msg) < 0 && e.n == 4096 &&
			      strstr(msg, "more than 4096 GC objects"),
			      "a bound of 4096: %zu visited (%s)", e.n, msg);
			free_seen(&e);
			same_walk_in(&h, "bounded", 0, 65536);
		}
		if (sizes[i] >= 100000) {
			/* The visitor stops the walk, before and after where
			 * the tail walker would take over. */
			same_walk(&h, "stopped early", 9000);
			same_walk(&h, "stopped late", sizes[i] - 10);
			/* Bounds the two walkers reach together (69,888 and
			 * 93,184 objects): the limit falls at the same object
			 * whoever visits it. */
			same_walk_in(&h, "bounded, met", 0, 273 * 4096);
			same_walk_in(&h, "bounded, late", 0, 364 * 4096);
			/* A node whose prev pointer is wrong, three quarters
			 * along the list (in the tail walker's part): to a
			 * node the forward walk passed long before, then to
			 * one half way, ahead of it, where the tail walker
			 * would go on from if it did not check the node's
			 * next pointer there.  Then one whose next pointer
			 * is wrong. */
			put64(&h, h.nodes[sizes[i] * 3 / 4] +
				     (uint64_t)h.L->gc_head_prev, h.nodes[7]);
			same_walk(&h, "bad prev, behind", 0);
			put64(&h, h.nodes[sizes[i] * 3 / 4] +
				     (uint64_t)h.L->gc_head_prev,
			      h.nodes[sizes[i] / 2]);
			same_walk(&h, "bad prev, ahead", 0);
			heap_free(&h);
			heap_make(&h, sizes[i]);
			put64(&h, h.nodes[sizes[i] * 2 / 3] +
				     (uint64_t)h.L->gc_head_next,
			      get64(&h, h.nodes[5] +
					   (uint64_t)h.L->gc_head_next));
			same_walk(&h, "bad next", 0);
		}
		heap_free(&h);
	}
	return CHECK_DONE("test_gc_walk");
}
