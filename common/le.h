/*
 * Little-endian loads from byte buffers copied out of a target or read
 * from a file (ELF headers, core notes, remote structs).  The one home
 * for them: callers never cast a buffer to a wider type, which would be
 * unaligned and host-endian.
 */
#ifndef COROSCOPE_COMMON_LE_H
#define COROSCOPE_COMMON_LE_H

#include <stdint.h>

static inline uint16_t le_u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t le_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le_u64(const unsigned char *p)
{
	return (uint64_t)le_u32(p) | (uint64_t)le_u32(p + 4) << 32;
}

static inline int32_t le_i32(const unsigned char *p)
{
	return (int32_t)le_u32(p);
}

static inline int64_t le_i64(const unsigned char *p)
{
	return (int64_t)le_u64(p);
}

#endif
