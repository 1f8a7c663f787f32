/*
 * `coroscope run`: a waiter the samples saw moving that waits all the
 * same.  An object whose every waiter moved is no cause (a queue being
 * fed), unless they retry it in vain: a lock whose holders stood still
 * (`while not lock.acquire(timeout=0.3)`), an Event nobody sets polled
 * under a timeout (`while not ready.wait(timeout=0.5)`).
 */
#ifndef COROSCOPE_CLI_RUN_RETRIES_H
#define COROSCOPE_CLI_RUN_RETRIES_H

#include <stddef.h>

#include "cli/collect.h"
#include "cli/run_seen.h"
#include "cli/watch_track.h"
#include "readers/waitgraph.h"

/* Is object node obj of c's graph held, and was each of its holders
 * (the first 4) seen stuck?  Then its waiters retry it: it did not
 * change hands. */
int run_retry_holders_stuck(const struct collection *c,
			    const struct watch_tracker *t, size_t obj);

/* Is *sn, a waiter on object node obj of g, a thread at one line at
 * every sample in a timed wait on an Event not set, that ran out and
 * began again twice or more?  It polls in vain, as one stuck waits.
 * (An Event only: a queue's consumer under a short timeout, fed, looks
 * alike.) */
int run_retry_polls_unset_event(const struct py_waitgraph *g, size_t obj,
				const struct run_seen *sn);

#endif
