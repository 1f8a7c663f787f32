#include "cli/json_memo.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Bounds on what a memo keeps: runs, their bytes, one run's bytes. */
#define JSON_MEMO_MAX_RUNS 65536
#define JSON_MEMO_MAX_BYTES ((size_t)16 << 20)
#define JSON_MEMO_MAX_RUN 4096
#define JSON_MEMO_FIRST_CAP 256

struct json_memo_entry {
	uint64_t key[JSON_MEMO_KEY];
	uint32_t place;     /* 0: an empty slot (see place_of()) */
	uint32_t need;      /* need_comma after the run */
	size_t off, len;    /* its bytes in m->bytes */
	/* A run with holes: their number, and its pieces' lengths (the
	 * bytes between the holes, end to end at off). */
	uint16_t nholes;
	uint16_t piece[JSON_MEMO_HOLES + 1];
};
_Static_assert(JSON_MEMO_MAX_RUN <= UINT16_MAX, "a piece's length fits");

void json_memo_init(struct json_memo *m)
{
	memset(m, 0, sizeof(*m));
}

void json_memo_release(struct json_memo *m)
{
	free(m->slots);
	free(m->bytes);
	json_memo_init(m);
}

/* Where j writes next, as far as a run's bytes depend on it: the depth
 * (the indent), whether a comma or a key came before, pretty or not.
 * Never 0. */
static uint32_t place_of(const struct json *j)
{
	return (uint32_t)j->depth << 8 |
	       (uint32_t)(j->need_comma[j->depth] & 3) << 2 |
	       (uint32_t)(j->pretty != 0) << 1 | 1u;
}

/* One multiplication a word, summed, and the well-mixed high half
 * folded onto the low bits the table is indexed by: the words are
 * addresses and small numbers, whose own low bits vary little.  (Every
 * run of a dump looks its key up here.) */
static size_t hash_of(const uint64_t key[JSON_MEMO_KEY], uint32_t place)
{
	_Static_assert(JSON_MEMO_KEY == 3, "hash_of() mixes three words");
	uint64_t h = (key[0] ^ (uint64_t)place << 32) * 0x9e3779b97f4a7c15ull +
		     key[1] * 0xff51afd7ed558ccdull +
		     key[2] * 0xc4ceb9fe1a85ec53ull;

	return (size_t)(h ^ h >> 32);
}

static inline struct json_memo_entry *slot_of(const struct json_memo *m,
					      const uint64_t key[JSON_MEMO_KEY],
					      uint32_t place)
{
	size_t i = hash_of(key, place) & (m->cap - 1), probes;

	/* At most half full: an empty slot ends every probe sequence. */
	for (probes = 0; probes < m->cap; probes++) {
		struct json_memo_entry *e = &m->slots[i];

		if (!e->place || (e->place == place && e->key[0] == key[0] &&
				  e->key[1] == key[1] && e->key[2] == key[2]))
			return e;
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

static void grow(struct json_memo *m)
{
	struct json_memo_entry *old = m->slots;
	size_t i, ocap = m->cap;

	m->cap = ocap ? 2 * ocap : JSON_MEMO_FIRST_CAP;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	memset(m->recent, 0, sizeof(m->recent));
	for (i = 0; i < ocap; i++)
		if (old[i].place)
			*slot_of(m, old[i].key, old[i].place) = old[i];
	free(old);
}

/* A new entry for key and place, with room for len bytes at its off,
 * or NULL where the memo keeps no more (or has one). */
static struct json_memo_entry *add(struct json_memo *m,
				   const uint64_t key[JSON_MEMO_KEY],
				   uint32_t place, size_t len, int need)
{
	struct json_memo_entry *e;

	if (!len || len > JSON_MEMO_MAX_RUN || m->n >= JSON_MEMO_MAX_RUNS ||
	    m->nbytes + len > JSON_MEMO_MAX_BYTES)
		return NULL;
	if (2 * (m->n + 1) > m->cap)
		grow(m);
	e = slot_of(m, key, place);
	if (!e || e->place)
		return NULL;
	/* and JSON_RAW_BLOCK bytes after the last run, which
	 * json_raw_holes() may read (never write out): set, so that
	 * nothing it copies is undefined */
	m->bytes = xgrow(m->bytes, &m->abytes,
			 m->nbytes + len + JSON_RAW_BLOCK, 1);
	memset(m->bytes + m->nbytes + len, 0, JSON_RAW_BLOCK);
	memcpy(e->key, key, sizeof(e->key));
	e->place = place;
	e->need = (uint32_t)need;
	e->off = m->nbytes;
	e->len = len;
	e->nholes = 0;
	m->nbytes += len;
	m->n++;
	return e;
}

/* Keep the len bytes at s under key and place (when there is room). */
static void keep(struct json_memo *m, const uint64_t key[JSON_MEMO_KEY],
		 uint32_t place, const char *s, size_t len, int need)
{
	struct json_memo_entry *e = add(m, key, place, len, need);

	if (e)
		memcpy(m->bytes + e->off, s, len);
}

/* A run not kept yet: fn writes it, and it is kept if it can be.  Cold
 * (once per key, against a dump's hundred thousand copies), which keeps
 * the copy's path free of saved registers. */
__attribute__((cold, noinline))
static void make_run(struct json *j, struct json_memo *m,
		     const uint64_t key[JSON_MEMO_KEY], uint32_t place,
		     json_memo_fn *fn, const void *arg)
{
	unsigned long flushes = j->flushes;
	size_t from = j->len;
	int depth = j->depth;

	fn(j, arg);
	if (j->depth != depth)
		CS_BUG("a json memo run left depth %d for %d", depth,
		       j->depth);
	/* Kept only when all of it is still in the buffer. */
	if (j->flushes == flushes && j->len >= from)
		keep(m, key, place, j->buf + from, j->len - from,
		     j->need_comma[depth]);
}

/* Which of m->recent a run's key and place note their slot in: by the
 * kind of run (the key's first word) and whether a comma is due (the
 * first element of an array has none, the next ones one). */
static inline size_t recent_of(const uint64_t key[JSON_MEMO_KEY],
			       uint32_t place)
{
	return (size_t)(key[0] ^ place >> 2) % JSON_MEMO_RECENT;
}

/* The run kept under key and place in the table, or NULL; noted as the
 * one to try first next time (see find_recent()). */
static const struct json_memo_entry *
find_in_table(struct json_memo *m, const uint64_t key[JSON_MEMO_KEY],
	      uint32_t place)
{
	struct json_memo_entry *e = m->cap ? slot_of(m, key, place) : NULL;

	if (!e || !e->place)
		return NULL;
	m->recent[recent_of(key, place)] = (size_t)(e - m->slots) + 1;
	return e;
}

/* The run kept under key and place if it is the one found last for the
 * same kind of run and place (recent_of()), or NULL: a task's frames are
 * mostly of one function, and a dump's generators of a few.  Whatever
 * slot it names, it is taken only when its key and place are these (an
 * empty slot's place, 0, is no place). */
static inline const struct json_memo_entry *
find_recent(const struct json_memo *m, const uint64_t key[JSON_MEMO_KEY],
	    uint32_t place)
{
	size_t recent = m->recent[recent_of(key, place)];
	const struct json_memo_entry *e;

	if (!recent)
		return NULL;
	e = &m->slots[recent - 1];
	if (e->place == place && e->key[0] == key[0] &&
	    e->key[1] == key[1] && e->key[2] == key[2])
		return e;
	return NULL;
}

/* json_memo_write() of a run not found last: in the table, or made.
 * Apart, so that the common path saves no registers. */
__attribute__((noinline))
static void write_other(struct json *j, struct json_memo *m,
			const uint64_t key[JSON_MEMO_KEY], uint32_t place,
			json_memo_fn *fn, const void *arg)
{
	const struct json_memo_entry *e = find_in_table(m, key, place);

	if (!e) {
		make_run(j, m, key, place, fn, arg);
		return;
	}
	if (e->nholes)
		CS_BUG("a json memo key of %u holes used with none",
		       (unsigned)e->nholes);
	json_raw(j, m->bytes + e->off, e->len, (int)e->need);
}

void json_memo_write(struct json *j, struct json_memo *m,
		     const uint64_t key[JSON_MEMO_KEY], json_memo_fn *fn,
		     const void *arg)
{
	uint32_t place = place_of(j);
	const struct json_memo_entry *e = find_recent(m, key, place);

	/* (A run with holes under this key: write_other() says it is a
	 * bug.) */
	if (!e || e->nholes) {
		write_other(j, m, key, place, fn, arg);
		return;
	}
	json_raw(j, m->bytes + e->off, e->len, (int)e->need);
}

/* A run with holes not kept yet: fn writes it piece by piece, the
 * holes between, and the pieces are kept if they can be. */
__attribute__((cold, noinline))
static void make_holes(struct json *j, struct json_memo *m,
		       const uint64_t key[JSON_MEMO_KEY], uint32_t place,
		       json_memo_piece_fn *fn, const void *arg,
		       const struct json_hole *h, size_t n)
{
	unsigned long flushes = j->flushes;
	size_t from[JSON_MEMO_HOLES + 1], len[JSON_MEMO_HOLES + 1];
	size_t i, total = 0;
	int depth = j->depth;
	struct json_memo_entry *e;

	if (n > JSON_MEMO_HOLES)
		CS_BUG("a json memo run of %zu holes", n);
	for (i = 0; i <= n; i++) {
		from[i] = j->len;
		fn(j, arg, i);
		len[i] = j->len - from[i];  /* checked below */
		total += len[i];
		if (i == n)
			break;
		if (j->need_comma[j->depth] != 2)
			CS_BUG("a json memo hole after no key");
		json_hole(j, &h[i]);
	}
	if (j->depth != depth)
		CS_BUG("a json memo run left depth %d for %d", depth,
		       j->depth);
	/* Kept only when all of it is still in the buffer. */
	if (j->flushes != flushes || j->len < from[0])
		return;
	e = add(m, key, place, total, j->need_comma[depth]);
	if (!e)
		return;
	e->nholes = (uint16_t)n;
	total = 0;
	for (i = 0; i <= n; i++) {
		memcpy(m->bytes + e->off + total, j->buf + from[i], len[i]);
		e->piece[i] = (uint16_t)len[i];
		total += len[i];
	}
}

__attribute__((noinline))
static void write_other_holes(struct json *j, struct json_memo *m,
			      const uint64_t key[JSON_MEMO_KEY],
			      uint32_t place, json_memo_piece_fn *fn,
			      const void *arg, const struct json_hole *h,
			      size_t n)
{
	const struct json_memo_entry *e = find_in_table(m, key, place);

	if (!e) {
		make_holes(j, m, key, place, fn, arg, h, n);
		return;
	}
	if (e->nholes != n)
		CS_BUG("a json memo key of %u holes used with %zu",
		       (unsigned)e->nholes, n);
	json_raw_holes(j, m->bytes + e->off, e->len, e->piece, h, n,
		       (int)e->need);
}

void json_memo_write_holes(struct json *j, struct json_memo *m,
			   const uint64_t key[JSON_MEMO_KEY],
			   json_memo_piece_fn *fn, const void *arg,
			   const struct json_hole *h, size_t n)
{
	uint32_t place = place_of(j);
	const struct json_memo_entry *e = find_recent(m, key, place);

	if (!e || e->nholes != n) {
		write_other_holes(j, m, key, place, fn, arg, h, n);
		return;
	}
	json_raw_holes(j, m->bytes + e->off, e->len, e->piece, h, n,
		       (int)e->need);
}
