/*
 * Line numbers from a code object's line table, decoded locally.
 *
 * The caller copies the table bytes out of the target (co_lnotab before
 * 3.10, co_linetable from 3.10) and passes them here with co_firstlineno.
 * The table comes from another process, so it is untrusted: every decoder
 * stops at `len`, bounds its work by `len`, and computes addresses and
 * lines in 64-bit integers, so a malformed table gives -1 (or a wrong but
 * harmless line), never a crash.
 *
 * Offsets are byte offsets into the bytecode, as CPython's own
 * PyCode_Addr2Line() takes them, and the answers match that function:
 *
 *   PY_LNOTAB (3.6 - 3.9)         offset = f_lasti.  Every offset has a
 *                                 line; past the last entry the last line.
 *   PY_LINETABLE_310 (3.10)       offset = f_lasti * 2 (f_lasti counts code
 *                                 units).  An unstarted generator has
 *                                 f_lasti == -1, so offset -2, which gives
 *                                 co_firstlineno, as frame.f_lineno reports
 *                                 (offset 0 would give -1: GEN_START has
 *                                 no line).  Past the table: -1.
 *   PY_LOCATIONS_311 (3.11+)      offset = instruction index * 2, the index
 *                                 counted from co_code_adaptive; -1 (3.11,
 *                                 3.12 prev_instr before the first
 *                                 instruction) likewise becomes -2.
 *
 * In every format a negative offset gives co_firstlineno.  A line below 0
 * can only come from a malformed table (or a negative firstlineno) and is
 * reported as -1.  The result ignores tracing: a traced frame's f_lineno
 * field may differ, as it does inside CPython.
 */
#ifndef COROSCOPE_READERS_LINETABLE_H
#define COROSCOPE_READERS_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "readers/layout.h"

/* The source line executing at byte offset `offset` into the code object's
 * bytecode, or -1 when the instruction has no line (or the table is
 * malformed/truncated: never read past len). firstlineno is co_firstlineno.
 * `table` may be NULL when `len` is 0. */
int linetable_line_at(enum py_linetable_kind kind, const uint8_t *table,
		      size_t len, int firstlineno, long offset);

/* One run of bytecode that maps to one line: offsets [start, end). */
struct linetable_range {
	int64_t start, end;
	int line;               /* -1: no line */
};

/*
 * Walks a table range by range, in offset order, skipping empty ranges.
 * For PY_LNOTAB the last range is open-ended (end == INT64_MAX): lnotab
 * does not record where the bytecode stops.  The iterator only points into
 * the caller's table, so it needs no release.
 */
struct linetable_iter {
	enum py_linetable_kind kind;
	const uint8_t *table;
	size_t len;
	size_t pos;             /* next unread byte */
	int64_t addr;           /* where the next range starts */
	int64_t line;           /* the line the table has reached */
	int done;               /* set at the end or on a malformed entry */
	int malformed;          /* set when the walk stopped on bad input */
};

void linetable_iter_init(struct linetable_iter *it,
			 enum py_linetable_kind kind, const uint8_t *table,
			 size_t len, int firstlineno);

/* Fill *r with the next non-empty range and return 1, or return 0 at the
 * end of the table (check it->malformed to tell a clean end from a bad
 * table). */
int linetable_iter_next(struct linetable_iter *it, struct linetable_range *r);

#endif
