#include "common/addrmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "common/error.h"
#include "common/hugeheap.h"
#include "common/strbuf.h"
#include "common/banned.h"

/*
 * Tables of this many bytes or more (131,072 slots: the generators of a
 * 10k-task dump) are mapped apart (hugeheap_map()), whole huge pages
 * that come zeroed: calloc() would clear them again, a pass over memory
 * the kernel has just cleared.  Smaller ones come from the heap.  The
 * capacity alone tells which a table is.
 */
#define MAPPED_MIN ((size_t)2 << 20)

static struct addrmap_slot *slots_new(size_t cap)
{
	struct addrmap_slot *s;

	if (cap > SIZE_MAX / sizeof(*s) || cap * sizeof(*s) < MAPPED_MIN)
		return xcalloc(cap, sizeof(*s));
	s = hugeheap_map(cap * sizeof(*s));
	if (!s)
		xdie_out_of_memory();
	return s;
}

static void slots_free(struct addrmap_slot *s, size_t cap)
{
	if (!s)
		return;
	if (cap * sizeof(*s) < MAPPED_MIN)
		free(s);
	else
		(void)munmap(s, hugeheap_size(cap * sizeof(*s)));
}

void addrmap_init(struct addrmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

void addrmap_release(struct addrmap *m)
{
	slots_free(m->slots, m->cap);
	addrmap_init(m);
}

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Fibonacci hashing, which spreads keys that share their low bits
	 * (object addresses) or differ only a little (neighbouring objects)
	 * through the product's top bits.  Middle bits (>> 17) did not: the
	 * 363 interned strings of a 10k-task dump took 14 probes a lookup.
	 * cap is a power of two, at least 64. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >>
			(64 - __builtin_ctzll((unsigned long long)cap)));
}

static size_t find(const struct addrmap *m, uint64_t key)
{
	size_t i = slot_of(key, m->cap);

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *addrmap_get(const struct addrmap *m, uint64_t key, int *found)
{
	size_t i;

	if (found)
		*found = 0;
	if (!m->cap || !key)
		return NULL;
	i = find(m, key);
	if (!m->slots[i].key)
		return NULL;
	if (found)
		*found = 1;
	return m->slots[i].val;
}

static void rehash(struct addrmap *m, size_t cap)
{
	struct addrmap old = *m;
	size_t i;

	m->slots = slots_new(cap);
	m->cap = cap;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			m->slots[find(m, old.slots[i].key)] = old.slots[i];
	slots_free(old.slots, old.cap);
}

void addrmap_put(struct addrmap *m, uint64_t key, void *val)
{
	size_t i;

	if (!key)
		CS_BUG("addrmap key 0");
	if ((m->len + 1) * 4 >= m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 64);
	i = find(m, key);
	if (!m->slots[i].key) {
		m->slots[i].key = key;
		m->len++;
	}
	m->slots[i].val = val;
}

void addrmap_prefetch(const struct addrmap *m, uint64_t key)
{
	if (m->cap && key)
		__builtin_prefetch(&m->slots[slot_of(key, m->cap)]);
}

void addrmap_reserve(struct addrmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 64;

	if (n > SIZE_MAX / 8)
		return;  /* cannot be met; let the puts fail as they grow */
	/* The load limit of addrmap_put(): (len + 1) * 4 < cap * 3. */
	while ((n + 1) * 4 >= cap * 3)
		cap *= 2;
	if (cap > m->cap)
		rehash(m, cap);
}

int addrmap_add(struct addrmap *m, uint64_t key)
{
	size_t i;

	if (!key)
		CS_BUG("addrmap key 0");
	if ((m->len + 1) * 4 >= m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 64);
	/* One probe sequence for the test and the insertion. */
	i = find(m, key);
	if (m->slots[i].key)
		return 0;
	m->slots[i].key = key;
	m->slots[i].val = NULL;
	m->len++;
	return 1;
}

int addrmap_next(const struct addrmap *m, size_t *pos, uint64_t *key,
		 void **val)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;

		if (m->slots[i].key) {
			*key = m->slots[i].key;
			if (val)
				*val = m->slots[i].val;
			return 1;
		}
	}
	return 0;
}
