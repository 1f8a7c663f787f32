/*
 * Small allocations carved from a few large blocks and freed all at
 * once: for the many short strings and arrays of one collection that
 * live exactly as long as it does (a task's name and await chain).  A
 * malloc and a free each for those was ~5 % of a 10k-task dump.
 *
 * arena_init() allocates nothing; arena_release() frees every block (and
 * so everything handed out) and leaves the arena empty, ready for reuse.
 * Allocation failure aborts, as with xmalloc().
 */
#ifndef COROSCOPE_COMMON_ARENA_H
#define COROSCOPE_COMMON_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *blocks;  /* newest first */
	char *next, *end;            /* the free part of the newest */
};

void arena_init(struct arena *a);
void arena_release(struct arena *a);
/* n bytes (n may be 0), aligned for any type, not cleared. */
void *arena_alloc(struct arena *a, size_t n);
/* n elements of size; overflow is a bug. */
void *arena_allocarray(struct arena *a, size_t n, size_t size);
char *arena_strdup(struct arena *a, const char *s);

#endif
