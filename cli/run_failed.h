/*
 * `coroscope run`'s cause for an asyncio task that ended by raising
 * while nothing retrieved its exception (cli/run_failed.c): the work
 * others wait for may never come, and nothing said why.
 */
#ifndef COROSCOPE_CLI_RUN_FAILED_H
#define COROSCOPE_CLI_RUN_FAILED_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* What failed, in words: "task 'Task-2'", "executor job producer()",
 * "pool job" (names escaped). */
void run_failed_subject(struct strbuf *sb, const struct py_failed_task *t);

/* Where it raised: "raised at app.py:5 in producer (innermost ...)",
 * or why that is not known. */
void run_failed_sites(struct strbuf *sb, const struct py_failed_task *t);

/* Where its worker process first raised it, for one raised again here
 * (a task that awaited a process pool's job, a result() that raised
 * it), after lead: "first raised at app.py:3 in crunch, in its worker
 * process (...)", 1; 0 and nothing when not known or not so. */
int run_failed_worker_sites(struct strbuf *sb, const struct py_failed_task *f,
			    const char *lead);

/* One exception of a failed task's group: its repr, then where it was
 * raised ("ValueError('x') raised at app.py:5 in fetch"). */
void run_failed_leaf(struct strbuf *sb, const struct py_exc_leaf *l);

/* Add c's failed tasks' causes (RUN_CAUSE_FAILED_TASK) to s. */
void run_summarize_failed(struct run_summary *s,
			  const struct collection *c);

#endif
