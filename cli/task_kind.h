/*
 * Alike tasks, which the text report's await tree merges into one entry
 * ("10000 tasks like this"): the same frames, state and kind of wait.
 */
#ifndef COROSCOPE_CLI_TASK_KIND_H
#define COROSCOPE_CLI_TASK_KIND_H

#include <stdint.h>

#include "readers/tasks.h"

/* Entries of struct task_kind_memo (a hash's top bits pick one). */
#define TASK_KIND_MEMO_BITS 4
#define TASK_KIND_MEMO (1 << TASK_KIND_MEMO_BITS)

/*
 * What task_kind_hash() hashed lately: each string by the hash before
 * it, direct-mapped (s NULL: empty; a zeroed memo is empty).  Alike
 * tasks hash the same strings in the same order from the same hashes:
 * after the first of ten thousand, no string is walked again.  Good for
 * one collection: a string's address stands for its text.
 */
struct task_kind_memo {
	struct task_kind_step {
		uint64_t h;
		const char *s;
		uint64_t out;
	} step[TASK_KIND_MEMO];
};

/* Alike tasks: the same frames (file, function, line, outermost to
 * innermost), the same state and the same kind of wait. */
int task_same_kind(const struct py_async *a, const struct py_task *x,
		   const struct py_task *y);
/* A hash of what task_same_kind() compares; never 0 (an addrmap key). */
uint64_t task_kind_hash(struct task_kind_memo *m, const struct py_async *a,
			const struct py_task *x);

#endif
