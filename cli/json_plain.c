#include "cli/json_plain.h"

#include <stdint.h>
#include <string.h>

#include "common/banned.h"

/*
 * Characters written as they are: printable ASCII but '"' and '\\'.  A
 * table, since the scan over every byte of a large document is the
 * writer's inner loop.  (NUL is not plain: it ends the scan.)
 */
const unsigned char json_plain_byte[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x10 */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x20 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x30 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x40 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,  /* 0x50 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x60 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,  /* 0x70: not DEL */
	/* 0x80 - 0xff: 0 */
};

typedef unsigned char json_bytes8 __attribute__((vector_size(8)));

/*
 * Are the 8 bytes of w plain?  The test for a byte below 0x20, above
 * 0x7e, or equal to '"' or '\\', on all 8 at once (GCC and clang lower
 * it to SSE2 or NEON).  (word_plain() is built on it.)
 */
static int u64_plain(uint64_t w)
{
	json_bytes8 v;

	memcpy(&v, &w, sizeof(v));
	v = (json_bytes8)((v < 0x20) | (v > 0x7e) | (v == '"') |
			  (v == '\\'));
	memcpy(&w, &v, sizeof(w));
	return w == 0;
}

static int word_plain(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return u64_plain(w);
}

/* Are all n bytes at p plain?  Whole blocks, then one block ending at
 * p + n that overlaps the last one tested: never a byte past the end. */
int json_all_plain(const unsigned char *p, size_t n)
{
	size_t i;

	if (n >= 16) {
		for (i = 0; i + 16 <= n; i += 16)
			if (!json_block_plain(p + i))
				return 0;
		return i == n || json_block_plain(p + n - 16);
	}
	if (n >= 8)
		return word_plain(p) && word_plain(p + n - 8);
	for (i = 0; i < n; i++)
		if (!json_plain_byte[p[i]])
			return 0;
	return 1;
}

/* The plain bytes from p on, up to end (a string's NUL): 16 bytes at a
 * time while 16 are left, then bytewise. */
const unsigned char *json_plain_run(const unsigned char *p,
				    const unsigned char *end)
{
	while (end - p >= 16 && json_block_plain(p))
		p += 16;
	while (p < end && json_plain_byte[*p])
		p++;
	return p;
}
