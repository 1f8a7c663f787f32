/*
 * Native frames in the reports (--native, --native-all): each thread's
 * merged stack (readers/native_merge.h) in the text traceback and in the
 * JSON "frames" array, and the threads that run no Python at all.
 */
#ifndef COROSCOPE_CLI_REPORT_NATIVE_H
#define COROSCOPE_CLI_REPORT_NATIVE_H

#include <stdio.h>

#include "cli/collect.h"
#include "cli/json.h"

/* The module holding the interpreter, as native_merge() takes it. */
const char *report_native_interp(const struct collection *c);

/* " [blocked in: sleep]" for a thread's text header, or nothing. */
void report_native_text_blocked(FILE *out, const struct collection *c,
				int tid);
/* The traceback lines of a Python thread, native frames interleaved. */
void report_native_text_frames(FILE *out, const struct collection *c,
			       const struct py_thread *t);
/* Threads of the process that have no Python thread state. */
void report_native_text_others(FILE *out, const struct collection *c);

/* "blocked_in" and "frames" members of a thread's JSON object. */
void report_native_json_frames(struct json *j, const struct collection *c,
			       const struct py_thread *t);
/* Thread objects for the threads without Python, inside "threads". */
void report_native_json_others(struct json *j, const struct collection *c);

#endif
