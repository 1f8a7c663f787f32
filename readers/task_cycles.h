/*
 * The await cycles among a collection's asyncio tasks (task A awaits B,
 * B awaits A), found by readers/cycles.c's search over the tasks'
 * awaited_by: for readers/tasks.c, once the tasks are linked.
 */
#ifndef COROSCOPE_READERS_TASK_CYCLES_H
#define COROSCOPE_READERS_TASK_CYCLES_H

#include "readers/tasks.h"

/* a->cycles, a->cycle_len, a->ncycles from a's tasks. */
void py_async_find_cycles(struct py_async *a);

#endif
