/*
 * Has an asyncio event loop run anything between two snapshots?  Every
 * callback a loop runs (a task's step, a timer's, an I/O event's) is
 * first put on its ready queue, BaseEventLoop._ready, a
 * collections.deque, and each turn takes the callbacks off its left
 * end.  So the left end's place (its block and index in the block)
 * moves only when the loop turns: callbacks added meanwhile (from other
 * threads, or by a step that never returns) go on at the right.  A loop
 * blocked in one step keeps the same mark at every snapshot; a loop
 * whose one busy task yields every few milliseconds, caught in that
 * task's step at every snapshot, does not.
 *
 * The left end comes back to a place it held after a few dozen turns
 * (the deque re-centres when empty): two snapshots alike by chance say
 * little, several in a row a lot.
 */
#ifndef COROSCOPE_READERS_LOOP_TURNS_H
#define COROSCOPE_READERS_LOOP_TURNS_H

#include <stdint.h>

#include "readers/pyproc.h"

/* The mark of loop's ready queue in this snapshot (nonzero), or 0 where
 * it has none that is a collections.deque (uvloop's queue is in C) or
 * it cannot be read. */
uint64_t py_loop_turn_mark(struct pyproc *py, uint64_t loop);

#endif
