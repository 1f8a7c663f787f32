/*
 * Tasks whose stacks show the same frames, noted while the stacks are
 * built (struct py_task's frames_like): the text report groups alike
 * tasks, and reading their generators again, scattered over a large
 * array, cost it more than the rest of its work.
 */
#ifndef COROSCOPE_READERS_TASK_ALIKE_H
#define COROSCOPE_READERS_TASK_ALIKE_H

#include "readers/tasks.h"

/* Set t->frames_like: before's, when before (the task built just before
 * t, or NULL) has the same frames, else t's own. */
void py_task_note_frames_like(const struct py_async *a, struct py_task *t,
			      const struct py_task *before);

#endif
