#include "common/range.h"

#include <string.h>

#include "common/banned.h"

/* A member read by memcpy: elements need not be aligned for uint64_t. */
static uint64_t field_at(const struct range_array *ra, size_t i, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)ra->base + i * ra->size + off, sizeof(v));
	return v;
}

long range_below(const struct range_array *ra, uint64_t addr)
{
	size_t lo = 0, hi = ra->n;

	/* Invariant: elements before lo start at or below addr, elements
	 * from hi on start above it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (field_at(ra, mid, ra->start_off) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

const void *range_find(const struct range_array *ra, uint64_t addr)
{
	long i = range_below(ra, addr);

	if (i < 0 || addr >= field_at(ra, (size_t)i, ra->end_off))
		return NULL;
	return (const char *)ra->base + (size_t)i * ra->size;
}
