/*
 * A write-only stream that keeps only a digest of the bytes written to
 * it (64-bit FNV-1a) and their count, for unit tests that compare two
 * large documents made two ways: kept in memory streams (realloc'ed as
 * they grow, every page faulted) the JSON writer's tests spent most of
 * their time, under ASan 13 s and 10 s, on the memory.
 */
#ifndef COROSCOPE_TESTS_SUPPORT_DIGEST_STREAM_H
#define COROSCOPE_TESTS_SUPPORT_DIGEST_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct digest {
	uint64_t hash;
	size_t len;
};

/* A stream writing into *d (reset); NULL when none could be made.
 * *d is complete once the stream is closed. */
FILE *digest_open(struct digest *d);
/* The same bytes, as far as a digest can tell. */
int digest_equal(const struct digest *a, const struct digest *b);

#endif
