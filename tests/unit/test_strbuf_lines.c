/*
 * Unit test of common/strbuf.c's arrays on cache lines
 * (xmallocarray_lines(), xgrow_lines()): every block starts on a line,
 * growing keeps the elements already there, a large block (from the
 * heap's huge pages) is aligned too, and an empty one is a block.
 */
#include "common/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

/* The shape of a generator's record: 128 bytes. */
struct rec {
	uint64_t v[16];
};

static int on_line(const void *p)
{
	return (uintptr_t)p % CS_LINE == 0;
}

int main(void)
{
	struct rec *r = NULL;
	size_t alloc = 0, i, n, bad = 0, misaligned = 0;
	unsigned char *small, *big, *empty;

	/* Small blocks first, each after a 16-byte one: where malloc's own
	 * alignment (16) would leave most of them off a line. */
	for (i = 0; i < 64; i++) {
		void *pad = malloc(16 + i % 3 * 16);

		small = xmallocarray_lines(i + 1, 24);
		misaligned += !on_line(small);
		memset(small, 0xab, (i + 1) * 24);
		free(small);
		free(pad);
	}
	CHECK(misaligned == 0, "%zu of 64 small blocks off a line",
	      misaligned);
	/* Grown one element at a time, 1 to 20,000: every move kept what
	 * was there and landed on a line. */
	misaligned = 0;
	for (n = 0; n < 20000; n++) {
		struct rec *before = r;

		r = xgrow_lines(r, &alloc, n + 1, sizeof(*r));
		CHECK(alloc >= n + 1, "alloc %zu for %zu elements", alloc,
		      n + 1);
		if (r != before)
			misaligned += !on_line(r);
		for (i = 0; i < 16; i++)
			r[n].v[i] = n * 16 + i;
	}
	CHECK(misaligned == 0, "%zu grown blocks off a line", misaligned);
	for (n = 0; n < 20000; n++)
		for (i = 0; i < 16; i++)
			bad += r[n].v[i] != n * 16 + i;
	CHECK(bad == 0, "%zu values changed by the moves", bad);
	/* No growth asked: the same block. */
	CHECK(xgrow_lines(r, &alloc, 10, sizeof(*r)) == r,
	      "a block large enough was moved");
	free(r);
	/* 3 MiB: a block of the heap's huge pages (common/hugeheap.c). */
	big = xmallocarray_lines(3 << 20, 1);
	CHECK(on_line(big), "a 3 MiB block off a line");
	big[(3 << 20) - 1] = 1;
	free(big);
	empty = xmallocarray_lines(0, sizeof(struct rec));
	CHECK(empty != NULL && on_line(empty), "an empty array");
	free(empty);
	return CHECK_DONE("test_strbuf_lines");
}
