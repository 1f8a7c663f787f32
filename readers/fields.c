#include "readers/fields.h"

#include <string.h>

#include "common/banned.h"

static int in_bounds(size_t size, int off, size_t width)
{
	return off >= 0 && (size_t)off <= size && size - (size_t)off >= width;
}

uint64_t field_u64(const void *buf, size_t size, int off)
{
	uint64_t v = 0;

	if (in_bounds(size, off, sizeof(v)))
		memcpy(&v, (const char *)buf + off, sizeof(v));
	return v;
}

int64_t field_i64(const void *buf, size_t size, int off)
{
	return (int64_t)field_u64(buf, size, off);
}

uint32_t field_u32(const void *buf, size_t size, int off)
{
	uint32_t v = 0;

	if (in_bounds(size, off, sizeof(v)))
		memcpy(&v, (const char *)buf + off, sizeof(v));
	return v;
}

int32_t field_i32(const void *buf, size_t size, int off)
{
	return (int32_t)field_u32(buf, size, off);
}

uint8_t field_u8(const void *buf, size_t size, int off)
{
	uint8_t v = 0;

	if (in_bounds(size, off, sizeof(v)))
		v = ((const uint8_t *)buf)[off];
	return v;
}

int8_t field_i8(const void *buf, size_t size, int off)
{
	return (int8_t)field_u8(buf, size, off);
}
