#include "common/addrmap.h"

#include <stdlib.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "common/banned.h"

void addrmap_init(struct addrmap *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->cap = 0;
	m->len = 0;
}

void addrmap_release(struct addrmap *m)
{
	free(m->keys);
	free(m->vals);
	addrmap_init(m);
}

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Fibonacci hashing: object addresses share their low bits. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static size_t find(const struct addrmap *m, uint64_t key)
{
	size_t i = slot_of(key, m->cap);

	while (m->keys[i] && m->keys[i] != key)
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
	if (!m->keys[i])
		return NULL;
	if (found)
		*found = 1;
	return m->vals[i];
}

static void rehash(struct addrmap *m, size_t cap)
{
	struct addrmap old = *m;
	size_t i;

	m->keys = xcalloc(cap, sizeof(*m->keys));
	m->vals = xcalloc(cap, sizeof(*m->vals));
	m->cap = cap;
	for (i = 0; i < old.cap; i++) {
		if (old.keys[i]) {
			size_t j = find(m, old.keys[i]);

			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
		}
	}
	free(old.keys);
	free(old.vals);
}

void addrmap_put(struct addrmap *m, uint64_t key, void *val)
{
	size_t i;

	if (!key)
		CS_BUG("addrmap key 0");
	if ((m->len + 1) * 4 >= m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 64);
	i = find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
}

int addrmap_add(struct addrmap *m, uint64_t key)
{
	int found;

	addrmap_get(m, key, &found);
	if (found)
		return 0;
	addrmap_put(m, key, NULL);
	return 1;
}

int addrmap_next(const struct addrmap *m, size_t *pos, uint64_t *key,
		 void **val)
{
	while (*pos < m->cap) {
		size_t i = (*pos)++;

		if (m->keys[i]) {
			*key = m->keys[i];
			if (val)
				*val = m->vals[i];
			return 1;
		}
	}
	return 0;
}
