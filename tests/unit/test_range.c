/*
 * Unit test of common/range.c: the one lookup of an address in sorted
 * ranges, on an element type whose start and end are not its first
 * members (as a caller's struct may have them anywhere).
 */
#include "common/range.h"

#include <stddef.h>
#include <stdint.h>

#include "tests/unit/check.h"
#include "common/banned.h"

struct elem {
	char tag;
	uint64_t end;          /* deliberately before start */
	uint64_t start;
};

static struct range_array array_of(const struct elem *e, size_t n)
{
	struct range_array ra = {
		e, n, sizeof(*e), offsetof(struct elem, start),
		offsetof(struct elem, end),
	};

	return ra;
}

static char tag_at(const struct range_array *ra, uint64_t addr)
{
	const struct elem *e = range_find(ra, addr);

	return e ? e->tag : '-';
}

int main(void)
{
	static const struct elem e[] = {
		{ 'a', 0x2000, 0x1000 },
		{ 'b', 0x3000, 0x2000 },   /* adjacent to a */
		{ 'c', 0x9000, 0x8000 },   /* after a gap */
		{ 'd', UINT64_MAX, UINT64_MAX - 0x1000 },
	};
	struct range_array ra = array_of(e, 4), none = array_of(e, 0);

	CHECK(range_below(&ra, 0) == -1, "below the first");
	CHECK(range_below(&ra, 0x1000) == 0, "at a start");
	CHECK(range_below(&ra, 0x1fff) == 0, "inside a");
	CHECK(range_below(&ra, 0x2000) == 1, "at b's start");
	CHECK(range_below(&ra, 0x5000) == 1, "in the gap: the one before");
	CHECK(range_below(&ra, UINT64_MAX) == 3, "at the top");
	CHECK(range_below(&none, 0x1000) == -1, "empty array");

	CHECK(tag_at(&ra, 0xfff) == '-', "before a");
	CHECK(tag_at(&ra, 0x1000) == 'a', "a's first byte");
	CHECK(tag_at(&ra, 0x1fff) == 'a', "a's last byte");
	CHECK(tag_at(&ra, 0x2000) == 'b', "end is exclusive");
	CHECK(tag_at(&ra, 0x3000) == '-', "b's end");
	CHECK(tag_at(&ra, 0x7fff) == '-', "gap");
	CHECK(tag_at(&ra, 0x8abc) == 'c', "c");
	CHECK(tag_at(&ra, UINT64_MAX - 1) == 'd', "near the top");
	CHECK(tag_at(&ra, UINT64_MAX) == '-', "the top is past every end");
	CHECK(range_find(&none, 0x1000) == NULL, "empty array finds nothing");
	return CHECK_DONE("test_range");
}
