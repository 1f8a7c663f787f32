#include "common/strbuf.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/hugeheap.h"
#include "common/banned.h"

static char empty_string[1];

void strbuf_init(struct strbuf *sb)
{
	sb->buf = empty_string;
	sb->len = 0;
	sb->alloc = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *ret = sb->alloc ? sb->buf : xstrdup("");

	strbuf_init(sb);
	return ret;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

void strbuf_truncate(struct strbuf *sb, size_t len)
{
	if (len > sb->len)
		CS_BUG("strbuf_truncate to %zu of %zu bytes", len, sb->len);
	sb->len = len;
	/* An empty strbuf's buffer is one shared byte: never written, so
	 * that threads may each have their own (readers/gens_many.c). */
	if (sb->alloc)
		sb->buf[len] = '\0';
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		CS_BUG("strbuf size overflow");
	if (need <= sb->alloc)
		return;
	if (!sb->alloc)
		sb->buf = NULL;
	sb->buf = xgrow(sb->buf, &sb->alloc, need, 1);
	if (sb->len == 0)
		sb->buf[0] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}

void strbuf_add_utf8(struct strbuf *sb, uint32_t c)
{
	char b[4];

	if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		c = 0xFFFD;
	if (c < 0x80) {
		strbuf_addch(sb, (int)c);
	} else if (c < 0x800) {
		b[0] = (char)(0xC0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3F));
		strbuf_add(sb, b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xE0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		b[2] = (char)(0x80 | (c & 0x3F));
		strbuf_add(sb, b, 3);
	} else {
		b[0] = (char)(0xF0 | (c >> 18));
		b[1] = (char)(0x80 | ((c >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3F));
		b[3] = (char)(0x80 | (c & 0x3F));
		strbuf_add(sb, b, 4);
	}
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		CS_BUG("bad format '%s'", fmt);
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void xdie_out_of_memory(void)
{
	fputs("coroscope: out of memory\n", stderr);
	exit(CS_ERR_INTERNAL);
}

static void *check(void *p)
{
	if (!p)
		xdie_out_of_memory();
	return p;
}

/* Every block through here: the heap's new part, or a large block
 * mapped apart, advised onto huge pages (common/hugeheap.h). */
static void *advise_huge(void *p, size_t n)
{
	hugeheap_grew();
	hugeheap_advise_block(p, n);
	return p;
}

void *xmalloc(size_t n)
{
	return advise_huge(check(malloc(n ? n : 1)), n);
}

void *xmallocarray(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		CS_BUG("allocation size overflow");
	return xmalloc(n * size);
}

void *xcalloc(size_t n, size_t size)
{
	void *p;

	if (size && n <= SIZE_MAX / size && hugeheap_heap_block(n * size))
		return memset(xmalloc(n * size), 0, n * size);
	p = check(calloc(n ? n : 1, size ? size : 1));
	/* n * size did not overflow: calloc checked. */
	return advise_huge(p, n * size);
}

void *xrealloc(void *p, size_t n)
{
	size_t old;
	void *q;

	if (p && hugeheap_heap_block(n) && (old = malloc_usable_size(p)) < n) {
		q = memcpy(xmalloc(n), p, old);
		free(p);
		return q;
	}
	return advise_huge(check(realloc(p, n ? n : 1)), n);
}

char *xstrdup(const char *s)
{
	return check(strdup(s));
}

char *xstrndup(const char *s, size_t n)
{
	return check(strndup(s, n));
}

/* The elements an array of *alloc grows to for need (need > *alloc):
 * doubled from 8 at least. */
static size_t grown(size_t alloc, size_t need, size_t size)
{
	size_t n = alloc ? alloc : 8;

	while (n < need) {
		if (n > ((size_t)-1) / 2 / size)
			CS_BUG("allocation size overflow");
		n *= 2;
	}
	return n;
}

void *xgrow(void *p, size_t *alloc, size_t need, size_t size)
{
	if (need <= *alloc)
		return p;
	*alloc = grown(*alloc, need, size);
	return xrealloc(p, *alloc * size);
}

void *xmallocarray_lines(size_t n, size_t size)
{
	void *p = NULL;

	if (size && n > SIZE_MAX / size)
		CS_BUG("allocation size overflow");
	n *= size;
	if (!n)
		n = 1;
	if (posix_memalign(&p, CS_LINE, n) != 0)
		p = NULL;
	return advise_huge(check(p), n);
}

/* (realloc() keeps malloc's alignment only: a new block, copied.) */
void *xgrow_lines(void *p, size_t *alloc, size_t need, size_t size)
{
	size_t old = *alloc;
	void *q;

	if (need <= old)
		return p;
	*alloc = grown(old, need, size);
	q = xmallocarray_lines(*alloc, size);
	if (p)
		memcpy(q, p, old * size);
	free(p);
	return q;
}
