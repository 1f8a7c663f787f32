/*
 * Warnings: what a collection could not show, and why, when that did
 * not stop it ("tasks and generators not shown: ...", "cannot find
 * 'libc.so.6' ...").  One list per collection (struct collection in
 * cli/collect.h), which every layer that finds something to say appends
 * to; only cli/ prints it: each entry as a "coroscope: warning: ..." line
 * on stderr, and in JSON "warnings" arrays.
 *
 * The text is kept raw, as formatted: it may quote names the target
 * chose (paths, a task's name), so it is escaped when printed, never
 * here.  The list is bounded: at most CS_WARNINGS_MAX entries of each
 * origin (then one saying more were left out), each cut to
 * CS_WARNING_MAX bytes.
 */
#ifndef COROSCOPE_COMMON_WARNINGS_H
#define COROSCOPE_COMMON_WARNINGS_H

#include <stdarg.h>
#include <stddef.h>

#define CS_WARNINGS_MAX 32
#define CS_WARNING_MAX 8192

/* Who said it: the JSON report keeps a core file's own warnings in its
 * "core" object. */
enum cs_warn_origin {
	CS_WARN_COLLECTION,  /* reading the process (any source) */
	CS_WARN_CORE,        /* the core file and the files it names */
	CS_WARN_NORIGINS
};

struct cs_warning {
	enum cs_warn_origin origin;
	char *text;
};

/* All zero (or cs_warnings_init()) is an empty list. */
struct cs_warnings {
	struct cs_warning *v;
	size_t n, alloc;
	size_t count[CS_WARN_NORIGINS];  /* appended, also those left out */
};

void cs_warnings_init(struct cs_warnings *w);
/* Free the entries; the list is empty again. */
void cs_warnings_release(struct cs_warnings *w);

/* Append one (w may be NULL: nobody listens). */
void cs_warn(struct cs_warnings *w, enum cs_warn_origin origin,
	     const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cs_vwarn(struct cs_warnings *w, enum cs_warn_origin origin,
	      const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
