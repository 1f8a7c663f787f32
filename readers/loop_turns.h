/*
 * Has an asyncio event loop run anything between two snapshots?  Every
 * callback a loop runs (a task's step, a timer's, an I/O event's) is
 * first put on its ready queue, BaseEventLoop._ready, a
 * collections.deque, and each turn takes the callbacks off it.  A deque
 * counts its changes: its `state` grows by one at each append and at
 * each pop, so its state less its length grows by two at each pop and
 * not at all at an append.  That count of the callbacks taken off so
 * far is the mark: it moves when the loop turns and at no other time
 * (callbacks added meanwhile, from other threads or by a step that
 * never returns, leave it).  A loop blocked in one step keeps the same
 * mark at every snapshot; a loop whose one busy task yields every few
 * milliseconds, caught in that task's step at every snapshot, does not.
 * (The count wraps only past 2^64 changes.)
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
