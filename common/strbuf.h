/*
 * A growable, always NUL-terminated string (after git's strbuf).
 * strbuf_init() allocates nothing; strbuf_release() frees the contents;
 * strbuf_detach() hands the buffer to the caller.  Allocation failure
 * aborts: coroscope cannot do anything useful without memory.
 */
#ifndef COROSCOPE_COMMON_STRBUF_H
#define COROSCOPE_COMMON_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;     /* never NULL after init: "" until something is added */
	size_t len;
	size_t alloc;
};

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Keep the first len bytes (len <= sb->len). */
void strbuf_truncate(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
/* One code point as UTF-8; surrogates and values past U+10FFFF, which
 * UTF-8 cannot carry, become U+FFFD. */
void strbuf_add_utf8(struct strbuf *sb, uint32_t c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Allocation helpers that abort on failure. */
/* Print "coroscope: out of memory" and exit 1: for allocations made
 * otherwise than with malloc (an mmap). */
_Noreturn void xdie_out_of_memory(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
/* n * size bytes, not cleared; overflow is a bug. */
void *xmallocarray(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow *p (an array of *alloc elements of size) to hold at least need. */
void *xgrow(void *p, size_t *alloc, size_t need, size_t size);
/*
 * xmallocarray() and xgrow() of an array that starts on a cache line
 * (CS_LINE bytes): one of records of 64 or 128 bytes read in random
 * order, each then one or two lines, where malloc's 16-byte alignment
 * made most of them two or three.  Free with free().
 */
#define CS_LINE 64
void *xmallocarray_lines(size_t n, size_t size);
void *xgrow_lines(void *p, size_t *alloc, size_t need, size_t size);

#endif
