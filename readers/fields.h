/*
 * Decoding fields out of a local copy of a remote struct, by the offsets
 * of the version table.  An offset of -1 (member absent in this version)
 * or one that falls outside the copy yields 0, so a reader can copy a
 * struct once and pick its members without re-checking bounds each time.
 */
#ifndef COROSCOPE_READERS_FIELDS_H
#define COROSCOPE_READERS_FIELDS_H

#include <stddef.h>
#include <stdint.h>

uint64_t field_u64(const void *buf, size_t size, int off);
int64_t field_i64(const void *buf, size_t size, int off);
int32_t field_i32(const void *buf, size_t size, int off);
uint32_t field_u32(const void *buf, size_t size, int off);
int8_t field_i8(const void *buf, size_t size, int off);
uint8_t field_u8(const void *buf, size_t size, int off);

#endif
