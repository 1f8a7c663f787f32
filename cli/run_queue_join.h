/*
 * `coroscope run`: a queue whose join() waits for items a get() took and
 * no task_done() marked (a consumer's path that skips it): the queue
 * is empty, its consumers wait in get() for more, and join() never
 * returns.  The cause of the queue says so, and who is in join().
 */
#ifndef COROSCOPE_CLI_RUN_QUEUE_JOIN_H
#define COROSCOPE_CLI_RUN_QUEUE_JOIN_H

#include <stddef.h>

#include "cli/collect.h"
#include "cli/run_causes.h"

struct strbuf;

/* Waiters of a queue looked at for their join(), at most. */
#define QUEUE_JOIN_WAITERS 64

/* For queue node `node` of c's graph waited on in join() while items
 * taken are not marked done (its unfinished count over its size), a
 * detail line of cause: "join() waits for 1 item a get() took and no
 * task_done() marked: thread 12 (MainThread) at app.py:14 in
 * <module>".  Nothing for any other object. */
void run_queue_join_detail(struct run_cause *cause,
			   const struct collection *c, size_t node,
			   struct strbuf *sb);

#endif
