/*
 * `watch`'s word on a task or job that failed while nothing retrieved
 * its exception (readers/task_failures.c, as `run`'s failed_task and
 * failed_job causes): a line each, once, at the first sample that finds
 * it, the work it would have done maybe awaited for ever.
 */
#ifndef COROSCOPE_CLI_WATCH_FAILED_H
#define COROSCOPE_CLI_WATCH_FAILED_H

#include <stddef.h>

#include "cli/collect.h"
#include "common/addrmap.h"

/* The failures said, by the task's or Future's address, with their
 * exception's (an address reused by a new failure is said again). */
struct watch_failed {
	struct addrmap said;
	size_t nsaid;
	int full;                  /* WATCH_FAILED_MAX said: no more */
};

/* Failures remembered at most: past them, one line says the rest go
 * unsaid. */
#define WATCH_FAILED_MAX 4096

void watch_failed_init(struct watch_failed *w);
void watch_failed_release(struct watch_failed *w);

/*
 * The failures of sample c not said before, a line each through emit():
 * "12:00:03 failed task 'Task-2': ValueError('x'), nothing retrieved it;
 * raised at app.py:5 in producer".  Those something retrieved, those a
 * gather will ask for, and a forked child's copies are left out, as
 * `run` leaves them.
 */
void watch_failed_events(struct watch_failed *w, const struct collection *c,
			 void (*emit)(const char *line, void *arg),
			 void *arg);

#endif
