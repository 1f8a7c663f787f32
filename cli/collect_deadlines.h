/*
 * When each stopped thread's sleep or timed wait ends of itself (cli/
 * collect_deadlines.c): read from the system call it is in at the stop
 * (attach/syscall_deadline.h), as seconds from the stop.
 */
#ifndef COROSCOPE_CLI_COLLECT_DEADLINES_H
#define COROSCOPE_CLI_COLLECT_DEADLINES_H

#include "cli/collect.h"

/* A live target's, read while its threads are still stopped: into
 * c->deadlines, each thread whose end is known. */
void collect_deadlines(struct collection *c);
/* Thread tid's, or NULL. */
const struct thread_deadline *collect_deadline_of(const struct collection *c,
						  int tid);

#endif
