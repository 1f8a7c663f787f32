/*
 * FNV-1a, 64-bit: fingerprints of stacks and samples built value by
 * value (cli/watch_sample.c's change detection, cli/thread_alike.c's
 * grouping), where equal inputs must hash alike and a table's low bits
 * must spread.
 */
#ifndef COROSCOPE_COMMON_HASH_H
#define COROSCOPE_COMMON_HASH_H

#include <stdint.h>

#define CS_FNV_START 0xcbf29ce484222325ULL
#define CS_FNV_PRIME 0x100000001b3ULL

/* h with v's eight bytes added. */
static inline uint64_t cs_fnv_u64(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8) {
		h ^= v & 0xff;
		h *= CS_FNV_PRIME;
	}
	return h;
}

/* h with str's bytes (NULL as "") and an end mark added: "ab", "c" does
 * not hash as "a", "bc". */
static inline uint64_t cs_fnv_str(uint64_t h, const char *str)
{
	const unsigned char *p = (const unsigned char *)(str ? str : "");

	for (; *p; p++) {
		h ^= *p;
		h *= CS_FNV_PRIME;
	}
	return cs_fnv_u64(h, 0x100);
}

#endif
