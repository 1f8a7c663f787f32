/*
 * The await cycles among a collection's asyncio tasks (task A awaits B,
 * B awaits A), found by readers/cycles.c's search over the tasks'
 * awaited_by: for readers/tasks.c, once the tasks are linked; and for
 * the reports, whether a cycle's names tell its tasks apart.
 */
#ifndef COROSCOPE_READERS_TASK_CYCLES_H
#define COROSCOPE_READERS_TASK_CYCLES_H

#include "readers/tasks.h"

/* a->cycles, a->cycle_len, a->ncycles from a's tasks. */
void py_async_find_cycles(struct py_async *a);
/* Do two tasks of await cycle i share a name (or have none)?  Then a
 * report names them with their addresses too: before 3.8 a task's name
 * is its coroutine's, and "await_task -> await_task" said nothing.
 * (Long cycles are taken to.) */
int py_async_cycle_names_clash(const struct py_async *a, size_t i);

#endif
