/*
 * watch (and run's samples): a task awaiting tasks that make progress
 * is waiting, not stuck.  main() gathering its server and workers, a
 * TaskGroup's parent, sat at one line for as long as they ran, and was
 * called "stuck" after --stuck seconds of healthy work.
 */
#ifndef COROSCOPE_CLI_WATCH_AWAITS_H
#define COROSCOPE_CLI_WATCH_AWAITS_H

#include <stddef.h>

#include "cli/collect.h"
#include "cli/watch_track.h"

/* Did a task that task c->async.tasks[task] awaits (directly, as a
 * TaskGroup's parent, or through a gather) move since the sample
 * before this one, as t last saw it?  The first WATCH_AWAITED_LOOKED_AT
 * are looked at. */
#define WATCH_AWAITED_LOOKED_AT 64
int watch_awaited_moved(const struct watch_tracker *t,
			const struct collection *c, size_t task);

#endif
