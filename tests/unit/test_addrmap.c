/*
 * Unit test of common/addrmap.c: lookups, replacement and iteration
 * across growth, with a table large enough to be mapped apart (2 MiB
 * and up) as well as small ones, grown one insertion at a time and
 * reserved at once.
 */
#include "common/addrmap.h"

#include <stddef.h>
#include <stdint.h>

#include "tests/unit/check.h"
#include "common/banned.h"

/* Neighbouring object addresses: a shared stride and low bits. */
static uint64_t key_of(size_t i)
{
	return 0x7f0000001000ull + (uint64_t)i * 48;
}

static void check_map(size_t n, int reserve)
{
	struct addrmap m;
	size_t i, pos = 0, seen = 0, bad = 0;
	uint64_t key;
	void *val;
	int found;

	addrmap_init(&m);
	if (reserve)
		addrmap_reserve(&m, n);
	for (i = 0; i < n; i++)
		addrmap_put(&m, key_of(i), (void *)(uintptr_t)(i + 1));
	CHECK(m.len == n, "%zu keys, len %zu", n, m.len);
	for (i = 0; i < n; i++)
		if (addrmap_get(&m, key_of(i), NULL) != (void *)(uintptr_t)(i + 1))
			bad++;
	CHECK(bad == 0, "%zu of %zu keys lost", bad, n);
	CHECK(addrmap_get(&m, key_of(n), &found) == NULL && !found,
	      "absent key found in %zu", n);
	CHECK(addrmap_add(&m, key_of(0)) == 0, "key 0 of %zu added twice", n);
	addrmap_put(&m, key_of(0), NULL);
	CHECK(addrmap_get(&m, key_of(0), &found) == NULL && found,
	      "NULL value not found in %zu", n);
	while (addrmap_next(&m, &pos, &key, &val))
		seen++;
	CHECK(seen == n, "iteration saw %zu of %zu", seen, n);
	addrmap_release(&m);
	CHECK(m.slots == NULL && m.cap == 0 && m.len == 0,
	      "released map of %zu not empty", n);
}

int main(void)
{
	/* 200,000 keys need 524,288 slots (8 MiB): mapped; 1,000 stay in
	 * the heap; the growth passes through both. */
	check_map(1000, 0);
	check_map(1000, 1);
	check_map(200000, 0);
	check_map(200000, 1);
	return CHECK_DONE("test_addrmap");
}
