/*
 * Decoding fields by the offsets of the version table, in two forms:
 *
 * - field_*(): out of a local copy of a remote struct.  An offset of -1
 *   (member absent in this version) or one that falls outside the copy
 *   yields 0, so a reader can copy a struct once and pick its members
 *   without re-checking bounds each time.
 *
 * - py_field_*(): one member read straight from the target, for readers
 *   that need a single field of an object.  The result tells the three
 *   cases apart: 1 read (*out set), 0 the version has no such member
 *   (off < 0, the table's "absent": *out is 0), or a negative status
 *   when the memory cannot be read (*out is 0, err filled).
 *
 * Everything is decoded little-endian (common/le.h), whatever the host.
 */
#ifndef COROSCOPE_READERS_FIELDS_H
#define COROSCOPE_READERS_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/le.h"

struct cs_err;
struct pyproc;

/* Inline: the readers decode a few hundred thousand members a dump,
 * and a call for each was ~1 % of a 10k-task one. */
static inline int field_in_bounds(size_t size, int off, size_t width)
{
	return off >= 0 && (size_t)off <= size && size - (size_t)off >= width;
}

static inline uint64_t field_u64(const void *buf, size_t size, int off)
{
	return field_in_bounds(size, off, 8) ?
	       le_u64((const unsigned char *)buf + off) : 0;
}

static inline int64_t field_i64(const void *buf, size_t size, int off)
{
	return (int64_t)field_u64(buf, size, off);
}

static inline uint32_t field_u32(const void *buf, size_t size, int off)
{
	return field_in_bounds(size, off, 4) ?
	       le_u32((const unsigned char *)buf + off) : 0;
}

static inline int32_t field_i32(const void *buf, size_t size, int off)
{
	return (int32_t)field_u32(buf, size, off);
}

static inline uint8_t field_u8(const void *buf, size_t size, int off)
{
	return field_in_bounds(size, off, 1) ? ((const uint8_t *)buf)[off] : 0;
}

static inline int8_t field_i8(const void *buf, size_t size, int off)
{
	return (int8_t)field_u8(buf, size, off);
}

int py_field_u64(struct pyproc *py, uint64_t obj, int off, uint64_t *out,
		 struct cs_err *err);
int py_field_i32(struct pyproc *py, uint64_t obj, int off, int32_t *out,
		 struct cs_err *err);

/* n 8-byte words at addr (an array of pointers), decoded: 0 or a
 * negative status. */
int py_read_words(struct pyproc *py, uint64_t addr, uint64_t *out, size_t n,
		  struct cs_err *err);

#endif
