/*
 * Woken in between, at the same address?  A task that awaits a future
 * is woken and parks on a new one, which the allocator often places
 * where the old one was (a consumer of a queue being fed): two samples
 * then look alike.  So, for a little while after the sample, while the
 * target runs, read the few words that change when that happens: the
 * task's _fut_waiter (cleared while it runs, then the new future) and
 * its future's state (done before the task is woken).  Against their
 * values at the stop, not against "pending": a future already done
 * there whose task was never woken (its wake-up queued behind a step
 * that blocks the loop, the timer of an asyncio.sleep() fired in the
 * same turn) stays done, and the task has not moved.
 *
 * So too, for a task running a step at the stop, its coroutine's state:
 * one that is no longer running has gone back to its loop, and the step
 * the next sample finds is another (a loop that turns between steps
 * that look alike at every sample).  Reads only, no stop: racy, which
 * is fine for "did this ever change".
 */
#ifndef COROSCOPE_CLI_WATCH_PROBE_H
#define COROSCOPE_CLI_WATCH_PROBE_H

#include "cli/collect.h"
#include "cli/watch_track.h"
#include "common/addrmap.h"

/* For up to budget_ms after a sample of c (live, resumed): the tasks
 * of c, unchanged since the tracker's last look, seen woken meanwhile,
 * added to *woke by address; the running ones seen ending their step,
 * to *ended. */
void watch_probe_wakeups(const struct watch_tracker *t,
			 const struct collection *c, double budget_ms,
			 struct addrmap *woke, struct addrmap *ended);

#endif
