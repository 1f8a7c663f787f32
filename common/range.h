/*
 * The one lookup of an address in a sorted array of address ranges:
 * mappings (struct cs_mapping), a core's PT_LOAD segments and NT_FILE
 * entries.  The element type is the caller's; it holds its range as two
 * uint64_t members, start and end ([start, end)), found by their offsets
 * (offsetof).  The array is sorted by start and its ranges do not
 * overlap.
 */
#ifndef COROSCOPE_COMMON_RANGE_H
#define COROSCOPE_COMMON_RANGE_H

#include <stddef.h>
#include <stdint.h>

struct range_array {
	const void *base;      /* n elements of size bytes */
	size_t n, size;
	size_t start_off;      /* offsetof(element, start) */
	size_t end_off;        /* offsetof(element, end) */
};

/* Index of the last element whose start is at or below addr, or -1. */
long range_below(const struct range_array *ra, uint64_t addr);

/* The element whose range contains addr, or NULL. */
const void *range_find(const struct range_array *ra, uint64_t addr);

#endif
