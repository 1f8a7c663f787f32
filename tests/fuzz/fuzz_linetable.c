/*
 * libFuzzer harness for the line table decoders (readers/linetable.c).
 *
 * Input: byte 0 picks the format (low 2 bits; 3 is an invalid kind) and
 * extremes (bit 7: firstlineno near INT_MAX, bit 6: offset LONG_MAX),
 * bytes 1-2 firstlineno and bytes 3-4 the offset (little-endian int16),
 * the rest is the table.  Seeds: tests/fuzz/corpus/linetable/.
 *
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -I. \
 *       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *       tests/fuzz/fuzz_linetable.c readers/linetable.c -o /tmp/fuzz_linetable
 *   mkdir -p /tmp/linetable-corpus
 *   /tmp/fuzz_linetable -max_total_time=60 /tmp/linetable-corpus \
 *       tests/fuzz/corpus/linetable
 *
 * (libFuzzer writes new inputs into the first directory: keep the
 * checked-in seeds second so they stay small.)
 *
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * a line below -1, a negative offset not giving firstlineno, ranges that
 * are not contiguous from 0, a walk longer than the table, or
 * linetable_line_at() disagreeing with the range walk.
 */
#include "readers/linetable.h"

#include <limits.h>
#include <stdlib.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int range_walk_line(enum py_linetable_kind kind, const uint8_t *t,
			   size_t len, int first, long offset)
{
	struct linetable_iter it;
	struct linetable_range r;
	int64_t expect = 0;
	size_t n = 0;
	int line = -1, found = 0;

	linetable_iter_init(&it, kind, t, len, first);
	while (linetable_iter_next(&it, &r)) {
		if (r.start != expect || r.end <= r.start || r.line < -1)
			abort();
		if (++n > len + 1)
			abort();
		if (!found && offset >= 0 &&
		    (offset < r.end || r.end == INT64_MAX)) {
			line = r.line;
			found = 1;
		}
		expect = r.end;
	}
	return line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum py_linetable_kind kind;
	int first, line;
	long offset;
	const uint8_t *table;
	size_t len;

	if (size < 5)
		return 0;
	kind = (enum py_linetable_kind)(data[0] & 3);
	first = (int16_t)(data[1] | data[2] << 8);
	offset = (int16_t)(data[3] | data[4] << 8);
	if (data[0] & 0x80)
		first = INT_MAX - (first & 0xff);
	if (data[0] & 0x40)
		offset = LONG_MAX;
	table = size > 5 ? data + 5 : NULL;
	len = size - 5;

	line = linetable_line_at(kind, table, len, first, offset);
	if (line < -1)
		abort();
	if (offset < 0 && line != (first < 0 ? -1 : first))
		abort();
	if (offset >= 0 &&
	    line != range_walk_line(kind, table, len, first, offset))
		abort();
	return 0;
}
