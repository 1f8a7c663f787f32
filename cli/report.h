/*
 * Printing a collection: the human-readable report and the JSON document
 * (schema 1, see man/coroscope.1).
 */
#ifndef COROSCOPE_CLI_REPORT_H
#define COROSCOPE_CLI_REPORT_H

#include <stdio.h>

#include "cli/collect.h"
#include "cli/json.h"

/* The output formats of --format (and --json). */
enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_DOT };

/* The report on out, then the collection's warnings (of origin
 * CS_WARN_COLLECTION) on stderr. */
void report_text(FILE *out, const struct collection *c);
/* The warnings of one origin: "coroscope: warning: TEXT" lines, escaped;
 * and the same as a JSON array of strings. */
void report_warnings(FILE *out, const struct cs_warnings *w,
		     enum cs_warn_origin origin);
void report_json_warnings(struct json *j, const struct cs_warnings *w,
			  enum cs_warn_origin origin);
/* The document as a value inside an enclosing JSON writer (for run). */
void report_json_value(struct json *j, const struct collection *c);
/* Only its members, inside an object the caller opened and closes: run
 * adds the process's parent to each dump this way. */
void report_json_members(struct json *j, const struct collection *c);
/* "INDENTname = repr", escaped. */
void report_text_local(FILE *out, const char *indent,
		       const struct py_local *l);
/* The tasks, cycles and orphan generators part of the text report. */
void report_text_async(FILE *out, const struct collection *c);
/* report_timers.c: the task's JSON "awaiting" object with its timers
 * (py_task.sleeps, .times_out), clock_s as collection.clock_s; their
 * text: cli/timer_text.h. */
void report_json_timed_awaiting(struct json *j, const struct py_task *t,
				double clock_s);
/* report_tasks.c: the name of the Python thread whose kernel id is tid,
 * or NULL. */
const char *report_thread_name(const struct collection *c, int tid);
/* report_failed.c: the tasks that ended by raising, whose exception
 * nothing retrieved (text, after the task trees), and all of those read
 * ("failed_tasks", "failed_tasks_not_read"). */
void report_text_failed_tasks(FILE *out, const struct collection *c);
void report_json_failed_tasks(struct json *j, const struct py_async *a);
/* The await graph for Graphviz. */
void report_dot(FILE *out, const struct collection *c);
/* report_sched.c: the greenlets' nodes and parent edges, inside it */
void report_dot_greenlets(FILE *out, const struct collection *c);
/* Greenlets (report_sched.c): text after the threads, JSON "greenlets". */
void report_text_greenlets(FILE *out, const struct collection *c);
void report_json_greenlets(struct json *j, const struct collection *c);

/* cli/report_thread_state.c: after a thread's id and name, how long it
 * has been off its CPU and whether it was left running (attach/live.h);
 * the same as the "off_cpu_s" and "left_running" members of its JSON
 * object; the target's record of a thread left running, or NULL. */
void report_text_thread_state(FILE *out, const struct collection *c, int tid);
/* After alike threads' ids: their sleeps' or timed waits' span
 * (" (time out in 697.0s .. 703.0s)"), when each has one of one kind. */
void report_text_threads_timer(FILE *out, const struct collection *c,
			       const int *tids, size_t n);
/* The same into sb; one thread's in its own words (" (times out in
 * 697.0s)"). */
struct strbuf;
void report_add_threads_timer(struct strbuf *sb, const struct collection *c,
			      const int *tids, size_t n);
void report_json_thread_state(struct json *j, const struct collection *c,
			      int tid);
const struct cs_thread *report_left_running(const struct collection *c,
					    int tid);
/* Per Python thread, 1 for one left running or the one that took a
 * core's signal, whose mark no group of alike threads shows
 * (cli/thread_alike.h); NULL when there is none.  Caller frees. */
unsigned char *report_threads_apart(const struct collection *c);
/* "Stopped by a signal (...)" under a live process's header when it
 * was (collection.job_stopped). */
void report_text_stopped(FILE *out, const struct collection *c);
/* The source line of f, unescaped, when there is one to show (not with
 * --no-source; see cli/source.h); else NULL. */
const char *report_source_line(const struct collection *c,
			       const struct py_frame *f, int *cut);
/* One Python frame in each format (also for report_sched.c and
 * report_native.c, which interleave them with their own lines). */
void report_text_frame(FILE *out, const struct collection *c,
		       const struct py_frame *f, int locals);
void report_json_frame(struct json *j, const struct py_frame *f, int locals);
void report_json_hex(struct json *j, uint64_t v);
/* "fd": {"fd": 7, "for": "read"} of a task or greenlet parked on fd
 * (io_wait PY_IO_READ or PY_IO_WRITE); nothing for PY_IO_NONE. */
void report_json_io(struct json *j, int io_wait, int64_t fd);
/* The document on its own. */
void report_json(FILE *out, const struct collection *c);

#endif
