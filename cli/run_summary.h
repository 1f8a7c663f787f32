/*
 * What a `coroscope run` hang report leads with: the likely causes of the
 * hang, read off each process's collection, most likely first.
 *
 * The causes come from the tasks view (await cycles, the tasks at the
 * bottom of the waits that hold up the most others) and from thread
 * stacks (threads blocked on locks, a lock deadlock between threads,
 * threads waiting on a condition, event or queue).
 */
#ifndef COROSCOPE_CLI_RUN_SUMMARY_H
#define COROSCOPE_CLI_RUN_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "cli/collect.h"
#include "cli/json.h"

/* In order of likelihood: the summary lists lower values first. */
enum run_cause_kind {
	RUN_CAUSE_AWAIT_CYCLE,  /* tasks awaiting each other */
	RUN_CAUSE_DEADLOCK,     /* two or more threads blocked on locks */
	RUN_CAUSE_STUCK_TASK,   /* a task parked on a plain future, blocking others */
	RUN_CAUSE_LOCK,         /* one thread blocked acquiring a lock */
	RUN_CAUSE_WAIT,         /* a thread waiting on a condition, event... */
};

struct run_cause {
	enum run_cause_kind kind;
	int pid;
	char *headline;   /* one line, e.g. "await cycle: ping -> pong -> ping" */
	char **details;   /* further lines (one per thread or task involved) */
	size_t ndetails;
};

struct run_summary {
	struct run_cause *causes;
	size_t n, alloc;
};

void run_summary_init(struct run_summary *s);
void run_summary_release(struct run_summary *s);

/*
 * Add the causes c suggests.  Call it while the process still exists:
 * it reads the kernel's view of each thread (is it waiting in a futex?)
 * and the source line of blocked frames through /proc/PID.
 */
void run_summarize(struct run_summary *s, const struct collection *c);

/* Greenlets and trio tasks (cli/run_sched.c), through these. */
struct strbuf;
void run_summarize_sched(struct run_summary *s, const struct collection *c);
struct run_cause *run_cause_add(struct run_summary *s, enum run_cause_kind kind,
				int pid, struct strbuf *headline);
void run_cause_detail(struct run_cause *cause, struct strbuf *line);
/* "FILE:LINE in QUALNAME" */
void run_add_frame_place(struct strbuf *sb, const struct py_frame *f);

/* Most likely first; causes of the same kind keep their order. */
void run_summary_sort(struct run_summary *s);

/* "kind" names used in JSON: "await_cycle", "deadlock", ... */
const char *run_cause_kind_name(enum run_cause_kind kind);

/* The summary as text lines, each prefixed with indent. */
void run_summary_text(FILE *out, const struct run_summary *s,
		      const char *indent);
/* The summary as a JSON array value. */
void run_summary_json(struct json *j, const struct run_summary *s);

/* The summary as a Markdown list (for GITHUB_STEP_SUMMARY). */
void run_summary_markdown(FILE *out, const struct run_summary *s);

/* Write s inside a Markdown code span: backticks and line breaks, which
 * would end it, are replaced, and it is cut at max bytes. */
void run_md_code(FILE *out, const char *s, size_t max);
/* Write s as Markdown text, its punctuation escaped, cut at max bytes. */
void run_md_text(FILE *out, const char *s, size_t max);

#endif
