/*
 * Who awaits a task: the linking half of the "second stack".
 *
 * A task blocked in `await fut` keeps fut in its _fut_waiter; fut in turn
 * holds, in its callbacks, what runs when it completes.  Decoding those
 * callbacks names the awaiters: a task's bound wakeup method (its C
 * task_wakeup, or 3.6 - 3.9's TaskWakeupMethWrapper), gather's, shield's
 * and asyncio.wait's closures, wait_for's functools.partial, a
 * TaskGroup's bound _on_task_done (its parent task), and as_completed's
 * completion callback (the task getting from its queue of done ones).  3.14 records the
 * awaiters itself in fut_awaited_by, a task or a set of tasks.
 *
 * Not an interface outside readers/: readers/tasks.c feeds it every
 * pending task's waiter, then asks each task's awaiters.
 */
#ifndef COROSCOPE_READERS_AWAITERS_H
#define COROSCOPE_READERS_AWAITERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "common/arena.h"
#include "readers/aio_class.h"

/* What a task's own fields say about who waits for it. */
struct task_links {
	uint64_t callback0;   /* fut_callback0 (C futures, 3.7+), or 0 */
	uint64_t callbacks;   /* list of callbacks, each a (callback,
				 context) tuple from 3.7; 0 or None */
	uint64_t awaited_by;  /* fut_awaited_by (3.14), or 0 */
};

struct awaiters {
	struct aio_types *types;  /* borrowed */
	struct addrmap waiters;   /* future -> tasks whose _fut_waiter it
				     is (a private list type) */
};

void awaiters_init(struct awaiters *aw, struct aio_types *types);
void awaiters_release(struct awaiters *aw);

/* Record that task is blocked on future (its _fut_waiter).  Every
 * pending task is noted before any awaiters_of() call. */
void awaiters_note_waiter(struct awaiters *aw, uint64_t future,
			  uint64_t task);

/*
 * The tasks blocked on task (its own fields in l, its own _fut_waiter in
 * waiter), each once, as an array of *n addresses in pool (never NULL).
 * A task is not its own awaiter through its own callbacks, only when it
 * really awaits itself.
 */
uint64_t *awaiters_of(struct awaiters *aw, uint64_t task, uint64_t waiter,
		      const struct task_links *l, struct arena *pool,
		      size_t *n);

#endif
