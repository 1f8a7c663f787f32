/*
 * The three line table formats, decoded as ranges of bytecode.
 *
 * Each format is a sequence of entries that advance a byte address and a
 * line number from (0, co_firstlineno); an entry covers the bytes between
 * the address before it and the address after it.  The formats differ in
 * how an entry is spelled and in which line the covered bytes get:
 *
 *   lnotab    (addr += u8, line += s8): the bytes get the line reached
 *             *before* the entry's line increment, and the bytes after the
 *             last entry keep the final line.
 *   3.10      (addr += u8, line += s8 or -128 for "no line"): the bytes get
 *             the line *after* the increment; a "no line" entry leaves the
 *             running line alone.
 *   3.11+     a head byte with bit 7 set (code in bits 6-3, code units - 1
 *             in bits 2-0) followed by continuation bytes with bit 7 clear;
 *             the line delta hides in the code or in a zigzag varint.
 *
 * Every walk is bounded by the table length: each step consumes at least
 * one byte.  Addresses and lines are 64-bit so no sum can overflow before
 * the range checks below reject it.
 */
#include "readers/linetable.h"

#include <limits.h>

#include "common/banned.h"

/* No real code object is anywhere near this big: an address past it means
 * the table is garbage (and keeps every sum far from INT64_MAX). */
#define ADDR_LIMIT ((int64_t)1 << 48)

/* 3.11+ location entry codes (bits 6-3 of the head byte) */
enum {
	LOC_ONE_LINE0 = 10,     /* 10, 11, 12: line delta is code - 10 */
	LOC_ONE_LINE2 = 12,
	LOC_NO_COLUMNS = 13,    /* signed varint line delta */
	LOC_LONG = 14,          /* signed varint line delta, then columns */
	LOC_NONE = 15,          /* no location at all */
};

void linetable_iter_init(struct linetable_iter *it,
			 enum py_linetable_kind kind, const uint8_t *table,
			 size_t len, int firstlineno)
{
	it->kind = kind;
	it->table = table;
	it->len = table ? len : 0;
	it->pos = 0;
	it->addr = 0;
	it->line = firstlineno;
	it->done = 0;
	it->malformed = 0;
}

static int stop(struct linetable_iter *it, int malformed)
{
	it->done = 1;
	it->malformed |= malformed;
	return 0;
}

/* Lines are C ints in CPython; a running line outside that range only
 * comes from a corrupt table.  The running line is always an int, so
 * bounding the delta first keeps the sum from overflowing. */
static int add_line(struct linetable_iter *it, int64_t delta)
{
	int64_t line;

	if (delta < -((int64_t)1 << 32) || delta > ((int64_t)1 << 32))
		return -1;
	line = it->line + delta;
	if (line < INT_MIN || line > INT_MAX)
		return -1;
	it->line = line;
	return 0;
}

static int visible_line(int64_t line)
{
	return line < 0 ? -1 : (int)line;
}

static int emit(struct linetable_iter *it, struct linetable_range *r,
		int64_t start, int line)
{
	r->start = start;
	r->end = it->addr;
	r->line = line;
	return 1;
}

static int next_lnotab(struct linetable_iter *it, struct linetable_range *r)
{
	/* A trailing odd byte is ignored, as CPython ignores it. */
	while (it->len - it->pos >= 2) {
		int64_t start = it->addr;
		int line = visible_line(it->line);

		it->addr += it->table[it->pos];
		if (add_line(it, (int8_t)it->table[it->pos + 1]) < 0)
			it->done = it->malformed = 1;
		it->pos += 2;
		if (it->addr > start)
			return emit(it, r, start, line);
		if (it->done)
			return 0;
	}
	/* Everything after the last entry keeps the final line. */
	it->done = 1;
	r->start = it->addr;
	r->end = INT64_MAX;
	r->line = visible_line(it->line);
	return 1;
}

static int next_310(struct linetable_iter *it, struct linetable_range *r)
{
	while (it->len - it->pos >= 2) {
		int64_t start = it->addr;
		int8_t delta = (int8_t)it->table[it->pos + 1];
		int line = -1;

		it->addr += it->table[it->pos];
		it->pos += 2;
		if (delta != -128) {
			if (add_line(it, delta) < 0)
				return stop(it, 1);
			line = visible_line(it->line);
		}
		if (it->addr > start)
			return emit(it, r, start, line);
	}
	return stop(it, it->pos != it->len);
}

/* A varint of 6-bit chunks, least significant first, 0x40 = more follow.
 * Fails when the table ends inside it. */
static int read_varint(struct linetable_iter *it, size_t *pos, uint64_t *out)
{
	uint64_t val = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*pos >= it->len)
			return -1;
		b = it->table[(*pos)++];
		if (shift < 64)
			val |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = val;
	return 0;
}

static int next_311(struct linetable_iter *it, struct linetable_range *r)
{
	int64_t start = it->addr;
	size_t pos = it->pos;
	uint8_t head;
	int code;
	int64_t delta = 0;
	uint64_t u;

	if (it->pos >= it->len)
		return stop(it, 0);
	head = it->table[pos++];
	code = (head >> 3) & 15;
	it->addr += ((head & 7) + 1) * 2;

	/* The next entry starts at the next byte with bit 7 set, whatever
	 * this entry's own bytes said. */
	it->pos++;
	while (it->pos < it->len && !(it->table[it->pos] & 0x80))
		it->pos++;

	if (code == LOC_NO_COLUMNS || code == LOC_LONG) {
		if (read_varint(it, &pos, &u) < 0) {
			/* The range is known, its line is not. */
			stop(it, 1);
			return emit(it, r, start, -1);
		}
		/* zigzag: the sign sits in bit 0 */
		delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	} else if (code >= LOC_ONE_LINE0 && code <= LOC_ONE_LINE2) {
		delta = code - LOC_ONE_LINE0;
	}
	if (add_line(it, delta) < 0) {
		stop(it, 1);
		return emit(it, r, start, -1);
	}
	/* "No location" is a head byte of 0b11111xxx: CPython tests bit 7
	 * too, so a stray byte of code 15 without it still gets a line. */
	if ((head >> 3) == (0x10 | LOC_NONE))
		return emit(it, r, start, -1);
	return emit(it, r, start, visible_line(it->line));
}

int linetable_iter_next(struct linetable_iter *it, struct linetable_range *r)
{
	if (it->done)
		return 0;
	if (it->addr > ADDR_LIMIT)
		return stop(it, 1);
	switch (it->kind) {
	case PY_LNOTAB:
		return next_lnotab(it, r);
	case PY_LINETABLE_310:
		return next_310(it, r);
	case PY_LOCATIONS_311:
		return next_311(it, r);
	}
	return stop(it, 1);
}

int linetable_line_at(enum py_linetable_kind kind, const uint8_t *table,
		      size_t len, int firstlineno, long offset)
{
	struct linetable_iter it;
	struct linetable_range r;

	/* Before the first instruction: CPython answers co_firstlineno. */
	if (offset < 0)
		return visible_line(firstlineno);
	linetable_iter_init(&it, kind, table, len, firstlineno);
	/* Ranges are contiguous from 0, so the first one ending past the
	 * offset contains it; lnotab's last range has no end. */
	while (linetable_iter_next(&it, &r))
		if (offset < r.end || r.end == INT64_MAX)
			return r.line;
	return -1;
}
