/*
 * Which bytes the JSON writer copies as they are (printable ASCII but
 * '"' and '\\'), tested a byte, a word or a block at a time: the scan
 * over every string from the target is the writer's inner loop.
 */
#ifndef COROSCOPE_CLI_JSON_PLAIN_H
#define COROSCOPE_CLI_JSON_PLAIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 1 for a plain byte, 0 for the rest (NUL is not plain: it ends a
 * scan). */
extern const unsigned char json_plain_byte[256];

typedef unsigned char json_bytes16 __attribute__((vector_size(16)));

/* Are all 16 bytes at p plain?  The same test on 16 bytes. */
static inline int json_block_plain(const unsigned char *p)
{
	json_bytes16 v;
	uint64_t half[2];

	memcpy(&v, p, sizeof(v));
	v = (json_bytes16)((v < 0x20) | (v > 0x7e) | (v == '"') |
			   (v == '\\'));
	memcpy(half, &v, sizeof(half));
	return (half[0] | half[1]) == 0;
}

/* Are all n bytes at p plain?  (Never reads past p + n.) */
int json_all_plain(const unsigned char *p, size_t n);
/* The plain bytes from p on, up to end (a string's NUL). */
const unsigned char *json_plain_run(const unsigned char *p,
				    const unsigned char *end);

#endif
