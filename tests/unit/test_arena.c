/*
 * Unit test of common/arena.c: pieces of every size keep their contents
 * and alignment, never overlap, survive new blocks (the large ones set
 * apart included), and the arena is reusable after release.
 */
#include "common/arena.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

#define PIECES 3000

static void check_pieces(struct arena *a)
{
	static unsigned char *p[PIECES];
	static size_t len[PIECES];
	size_t i, j;
	int bad = 0;

	for (i = 0; i < PIECES; i++) {
		/* mostly small, now and then larger than a block's quarter
		 * (a block of its own) or than a block */
		len[i] = i % 97 == 0 ? 20000 + i * 10 : i % 13;
		p[i] = arena_alloc(a, len[i]);
		CHECK(p[i] != NULL, "piece %zu is NULL", i);
		CHECK((uintptr_t)p[i] % alignof(max_align_t) == 0,
		      "piece %zu misaligned", i);
		memset(p[i], (int)(i & 0xff), len[i]);
	}
	for (i = 0; i < PIECES; i++)
		for (j = 0; j < len[i]; j++)
			if (p[i][j] != (unsigned char)(i & 0xff))
				bad++;
	CHECK(bad == 0, "%d bytes overwritten", bad);
}

int main(void)
{
	struct arena a;
	size_t *v;
	char *s;

	arena_init(&a);
	s = arena_strdup(&a, "Task-12");
	CHECK(!strcmp(s, "Task-12"), "strdup gave '%s'", s);
	v = arena_allocarray(&a, 0, sizeof(*v));
	CHECK(v != NULL, "an empty array is not NULL");
	check_pieces(&a);
	CHECK(!strcmp(s, "Task-12"), "first string overwritten: '%s'", s);
	arena_release(&a);
	CHECK(a.blocks == NULL, "release leaves no block");
	/* reusable after release, and a first piece larger than a block */
	v = arena_allocarray(&a, 100000, sizeof(*v));
	v[99999] = 7;
	s = arena_strdup(&a, "");
	CHECK(*s == '\0' && v[99999] == 7, "after a large first piece");
	check_pieces(&a);
	arena_release(&a);
	arena_release(&a);
	return CHECK_DONE("test_arena");
}
