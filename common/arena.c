#include "common/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* Large enough that a 10k-task collection takes a few dozen blocks, small
 * enough that a handful of tasks costs little. */
#define ARENA_BLOCK (64 * 1024)
#define ARENA_ALIGN alignof(max_align_t)

struct arena_block {
	struct arena_block *next;
	alignas(max_align_t) char data[];
};

void arena_init(struct arena *a)
{
	a->blocks = NULL;
	a->next = a->end = NULL;
}

void arena_release(struct arena *a)
{
	struct arena_block *b = a->blocks, *next;

	while (b) {
		next = b->next;
		free(b);
		b = next;
	}
	arena_init(a);
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b;
	size_t size;
	char *p;

	if (n > SIZE_MAX / 2)
		CS_BUG("arena allocation of %zu bytes", n);
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (a->next && n <= (size_t)(a->end - a->next)) {
		p = a->next;
		a->next += n;
		return p;
	}
	/* A new block; one for a large piece alone, behind the current one
	 * so that the current one's free part stays in use. */
	size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
	b = xmalloc(sizeof(*b) + size);
	if (size != ARENA_BLOCK && a->blocks) {
		b->next = a->blocks->next;
		a->blocks->next = b;
		return b->data;
	}
	b->next = a->blocks;
	a->blocks = b;
	a->next = b->data + n;
	a->end = b->data + size;
	return b->data;
}

void *arena_allocarray(struct arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size)
		CS_BUG("arena array of %zu x %zu bytes", n, size);
	return arena_alloc(a, n * size);
}

char *arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(arena_alloc(a, n), s, n);
}
