/*
 * A hash map from target addresses (non-zero uint64) to local pointers,
 * open addressing with linear probing.  Used for caches keyed by remote
 * object address and as a visited set for bounded walks.
 */
#ifndef COROSCOPE_COMMON_ADDRMAP_H
#define COROSCOPE_COMMON_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

struct addrmap_slot {
	uint64_t key;       /* 0 = empty slot */
	void *val;
};

struct addrmap {
	struct addrmap_slot *slots;  /* key and value side by side: one
					cache miss per lookup in a big map */
	size_t cap;         /* power of two, or 0 */
	size_t len;
};

void addrmap_init(struct addrmap *m);
/* Free the table; values are the caller's (free them first if owned). */
void addrmap_release(struct addrmap *m);
/* The value for key, or NULL; *found (optional) tells NULL values apart. */
void *addrmap_get(const struct addrmap *m, uint64_t key, int *found);
/* Insert or replace.  key must be non-zero. */
void addrmap_put(struct addrmap *m, uint64_t key, void *val);
/* Insert key (value NULL) if absent: 1 when it was new, 0 when seen. */
int addrmap_add(struct addrmap *m, uint64_t key);
/* Room for n keys in all, so that inserting them never rehashes. */
void addrmap_reserve(struct addrmap *m, size_t n);
/* Start loading the slot of key into the CPU cache: a loop over many
 * independent lookups calls this some keys ahead of addrmap_get(). */
void addrmap_prefetch(const struct addrmap *m, uint64_t key);

/* Iterate: for (i = 0; addrmap_next(m, &i, &k, &v); ) */
int addrmap_next(const struct addrmap *m, size_t *pos, uint64_t *key,
		 void **val);

#endif
