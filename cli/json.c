#include "cli/json.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/json_digits.h"
#include "cli/json_part.h"
#include "cli/json_plain.h"
#include "cli/json_writer.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "common/banned.h"

/*
 * Output speed matters: a dump of 100,000 tasks is a JSON document of a
 * few hundred megabytes, and one stdio call per character or per key
 * costs more than reading the target did.  So the writer fills its own
 * buffer and hands it to stdio in large blocks.
 */

void json_init(struct json *j, FILE *out, int pretty)
{
	j->out = out;
	j->depth = 0;
	memset(j->need_comma, 0, sizeof(j->need_comma));
	j->pretty = pretty;
	j->indent = 0;
	j->len = 0;
	j->buf = j->own;
	j->cap = JSON_BUF;
	j->background = 0;
	j->writer = NULL;
	j->part = NULL;
	j->flushes = 0;
}

struct json *json_new(FILE *out, int pretty)
{
	struct json *j = xmalloc(sizeof(*j));

	json_init(j, out, pretty);
	return j;
}

void json_background(struct json *j)
{
	j->background = 1;
}

/* Cold: once a buffer, against millions of values, whose functions then
 * keep nothing in saved registers on their way past it. */
__attribute__((cold)) void json_flush(struct json *j)
{
	j->flushes++;
	if (j->part) {
		json_part_next_chunk(j);
		return;
	}
	if (!j->len)
		return;
	if (j->writer) {
		j->buf = json_writer_swap(j->writer, j->buf, j->len);
		j->len = 0;
		return;
	}
	fwrite(j->buf, 1, j->len, j->out);
	j->len = 0;
	/* Only a document that outgrew one buffer is worth a thread; where
	 * none starts, it is written here, as before. */
	if (j->background) {
		j->background = 0;
		j->writer = json_writer_start(j->out, JSON_WRITER_BLOCK,
					      &j->buf);
		if (j->writer)
			j->cap = JSON_WRITER_BLOCK;
	}
}

/* The top-level value is closed: everything reaches out now.  (Cold
 * and apart, like json_flush().) */
__attribute__((cold, noinline)) static void flush_all(struct json *j)
{
	/* A document that ends within its first buffer needs no thread. */
	j->background = 0;
	if (!j->writer) {
		json_flush(j);
		return;
	}
	(void)json_writer_stop(j->writer, j->buf, j->len);  /* ferror(out) */
	j->flushes++;
	j->writer = NULL;
	j->buf = j->own;
	j->cap = JSON_BUF;
	j->len = 0;
}

static inline void put(struct json *j, int c)
{
	if (j->len == j->cap)
		json_flush(j);
	j->buf[j->len++] = (char)c;
}

/* put_n() of more than the room left: in pieces through the buffers
 * (bounded by n / cap rounds), so that a writer thread keeps the
 * order.  Apart and cold, like json_flush(). */
__attribute__((cold, noinline))
static void put_long(struct json *j, const char *s, size_t n)
{
	json_flush(j);
	while (n > j->cap) {
		size_t k = j->cap;  /* json_flush() may start a writer,
				       whose blocks are larger */

		memcpy(j->buf, s, k);
		j->len = k;
		json_flush(j);
		s += k;
		n -= k;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
}

static inline void put_n(struct json *j, const char *s, size_t n)
{
	char *o;

	if (n > j->cap - j->len) {
		put_long(j, s, n);
		return;
	}
	o = j->buf + j->len;
	j->len += n;
	memcpy(o, s, n);
}

/* A newline and two spaces a level: as many as the deepest nesting. */
static const char spaces[] = "\n                                "
			     "                                ";
_Static_assert(sizeof(spaces) >= 2 * JSON_MAX_DEPTH + 1,
	       "one run of spaces for the deepest nesting");

/* The newline and spaces a line at depth starts with (pretty), or
 * nothing (compact). */
static inline size_t line_start(const struct json *j, int depth)
{
	return j->pretty ? 2 * (size_t)depth + 1 : 0;
}

/* The newline and spaces of an indent n bytes long at o, into reserved
 * room: a constant size the compiler turns into moves, one of 16 bytes
 * down to depth 7 (where nearly every value is), and the part that
 * belongs is kept. */
static inline char *indent_at(char *o, size_t n)
{
	if (n <= 16)
		memcpy(o, spaces, 16);
	else
		memcpy(o, spaces, sizeof(spaces) - 1);
	return o + n;
}

/*
 * The fast path of the writer: make room for n bytes at once, then
 * write through a pointer with no test per piece.  PREFIX_MAX is the
 * most a value's prefix takes (a comma and the deepest indent).
 */
#define PREFIX_MAX (1 + sizeof(spaces))

static inline int room(const struct json *j, size_t n)
{
	return n <= j->cap - j->len;
}

static inline char *reserve(struct json *j, size_t n)
{
	if (n > j->cap - j->len)
		json_flush(j);
	return j->buf + j->len;
}

/* value_prefix() into reserved room (PREFIX_MAX bytes at o). */
static inline char *prefix_at(struct json *j, char *o)
{
	int *need = &j->need_comma[j->depth];

	if (*need == 2) {
		*need = 1;  /* after a key */
		return o;
	}
	/* The comma is written either way and kept when it is due (need
	 * is 0 or 1 here): one branch fewer on every value. */
	*o = ',';
	o += *need;
	*need = 1;
	return indent_at(o, j->indent);
}

/* Before any value: a comma if needed (keys already wrote theirs). */
static void value_prefix(struct json *j)
{
	j->len = (size_t)(prefix_at(j, reserve(j, PREFIX_MAX)) - j->buf);
}

static void begin(struct json *j, char c)
{
	char *o = prefix_at(j, reserve(j, PREFIX_MAX + 1));

	*o++ = c;
	j->len = (size_t)(o - j->buf);
	if (j->depth + 1 >= JSON_MAX_DEPTH)
		CS_BUG("json nesting too deep");
	j->depth++;
	j->indent = line_start(j, j->depth);
	j->need_comma[j->depth] = 0;
}

static void finish(struct json *j, char c)
{
	int had = j->need_comma[j->depth];
	size_t line;
	char *o;

	if (j->depth <= 0)
		CS_BUG("json close without open");
	j->depth--;
	/* After members the closer has a line of its own, indented as its
	 * opener's (at the top level, the newline alone). */
	line = line_start(j, j->depth);
	j->indent = j->depth ? line : 0;
	o = reserve(j, PREFIX_MAX + 2);
	if (had)
		o = indent_at(o, line);
	*o++ = c;
	if (j->depth == 0) {
		*o++ = '\n';
		j->len = (size_t)(o - j->buf);
		flush_all(j);
		return;
	}
	j->len = (size_t)(o - j->buf);
}

void json_begin_object(struct json *j) { begin(j, '{'); }
void json_end_object(struct json *j) { finish(j, '}'); }
void json_begin_array(struct json *j) { begin(j, '['); }
void json_end_array(struct json *j) { finish(j, ']'); }

static void escape(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + strlen(s);

	while (*p) {
		unsigned char c = *p;
		char u[8];
		int n = 0, k;
		uint32_t cp;

		if (json_plain_byte[c]) {
			const unsigned char *run = p;

			p = json_plain_run(p, end);
			put_n(j, (const char *)run, (size_t)(p - run));
			continue;
		}
		if (c == '"' || c == '\\') {
			put(j, '\\');
			put(j, c);
			p++;
			continue;
		}
		/* Control characters, also DEL and the C1 range (U+0080 -
		 * U+009F), which JSON allows raw but a terminal showing the
		 * document would obey. */
		if (c < 0x20 || c == 0x7F ||
		    (c == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)) {
			if (c == 0xC2)
				c = *++p;
			snprintf(u, sizeof(u), "\\u%04x", c);
			put_n(j, u, 6);
			p++;
			continue;
		}
		/* Pass valid UTF-8 sequences through, replace the rest. */
		if (c >= 0xC2 && c <= 0xDF)
			n = 1;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3;
		for (k = 1; n && k <= n; k++)
			if ((p[k] & 0xC0) != 0x80)
				n = 0;
		/* and not overlong, a surrogate, or past U+10FFFF: the
		 * second byte's range depends on the first (RFC 3629) */
		if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) ||
		    (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F))
			n = 0;
		/* a str's NUL or lone surrogate as the readers keep it
		 * (cli/escape.h): as Python's json writes them */
		if (!n && (k = (int)esc_kept_char(p, (size_t)(end - p), &cp))) {
			snprintf(u, sizeof(u), "\\u%04x", (unsigned)cp);
			put_n(j, u, 6);
			p += k;
			continue;
		}
		if (!n) {
			put_n(j, "\\ufffd", 6);
			p++;
			continue;
		}
		put_n(j, (const char *)p, (size_t)n + 1);
		p += n + 1;
	}
}

void json_raw(struct json *j, const char *s, size_t n, int need)
{
	/* need first: the copy is then the last thing done. */
	j->need_comma[j->depth] = need;
	put_n(j, s, n);
}

/* A hole's value at o, in room for JSON_HOLE_ROOM bytes. */
#define JSON_HOLE_ROOM (1 + JSON_UINT_ROOM)
_Static_assert(JSON_HEX_ROOM <= JSON_HOLE_ROOM, "a hole's room fits hex");

static inline char *hole_at(char *o, const struct json_hole *h)
{
	unsigned long long u = (unsigned long long)h->num;

	if (h->kind == JSON_HOLE_ADDR ? !h->addr :
	    h->kind == JSON_HOLE_NUM && h->num < 0) {
		memcpy(o, "null", 4);
		return o + 4;
	}
	if (h->kind == JSON_HOLE_ADDR)
		return json_digits_hex(o, h->addr);
	if (h->num < 0) {
		*o++ = '-';
		u = 0 - u;
	}
	return json_digits_uint(o, u);
}

void json_hole(struct json *j, const struct json_hole *h)
{
	char *o = prefix_at(j, reserve(j, PREFIX_MAX + JSON_HOLE_ROOM));

	j->len = (size_t)(hole_at(o, h) - j->buf);
}

/* json_raw_holes() without room for all of it: run by run, each
 * through the buffers.  Cold, like json_flush(). */
__attribute__((cold, noinline))
static void raw_holes_apart(struct json *j, const char *s,
			    const uint16_t *len, const struct json_hole *h,
			    size_t n, int need)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_raw(j, s, len[i], 2);  /* a key came last */
		s += len[i];
		json_hole(j, &h[i]);
	}
	json_raw(j, s, len[n], need);
}

/* n bytes from s to o, in room for JSON_RAW_BLOCK more: most runs
 * between holes are a key or two, copied as one block of a constant
 * size (the compiler's moves) instead of a call. */
static inline char *copy_run(char *o, const char *s, size_t n)
{
	if (n <= JSON_RAW_BLOCK)
		memcpy(o, s, JSON_RAW_BLOCK);
	else
		memcpy(o, s, n);
	return o + n;
}

void json_raw_holes(struct json *j, const char *s, size_t total,
		    const uint16_t *len, const struct json_hole *h, size_t n,
		    int need)
{
	size_t i;
	char *o;

	if (!room(j, total + n * JSON_HOLE_ROOM + JSON_RAW_BLOCK)) {
		raw_holes_apart(j, s, len, h, n, need);
		return;
	}
	/* One test for room, then bytes and values end to end. */
	o = j->buf + j->len;
	for (i = 0; i < n; i++) {
		o = copy_run(o, s, len[i]);
		s += len[i];
		o = hole_at(o, &h[i]);
	}
	o = copy_run(o, s, len[n]);
	j->len = (size_t)(o - j->buf);
	j->need_comma[j->depth] = need;
}

void json_escape(FILE *f, const char *s)
{
	struct json j;

	json_init(&j, f, 0);
	escape(&j, s);
	json_flush(&j);
}

/*
 * The functions called for nearly every byte of a dump (json_key_lit,
 * json_hex, json_int) start with a test for room that a full buffer
 * fails: then they flush in a function apart and are called again
 * (once: a flushed buffer has room), so that their common path ends
 * in no call and keeps nothing in saved registers.
 */
#define KEY_ROOM (PREFIX_MAX + JSON_MAX_KEY + 4)
#define HEX_ROOM (PREFIX_MAX + JSON_HEX_ROOM)
#define INT_ROOM (PREFIX_MAX + 1 + JSON_UINT_ROOM)

__attribute__((cold, noinline))
static void key_after_flush(struct json *j, const char *quoted, size_t n)
{
	json_flush(j);
	json_key_lit(j, quoted, n);
}

/* The prefix and a literal key (see json_key()) into room reserved for
 * KEY_ROOM bytes; its value goes at the pointer returned. */
static inline char *key_at(struct json *j, const char *quoted, size_t n)
{
	char *o = prefix_at(j, j->buf + j->len);

	_Static_assert(sizeof(JSON_KEY_PAD) - 1 >= JSON_MAX_KEY,
		       "a key literal is padded to the block copied");
	/* n counts the space after the colon, which only pretty has. */
	n -= !j->pretty;
	/* Most keys fit one move of 16 bytes (every literal has that many,
	 * its padding included). */
	if (n <= 16)
		memcpy(o, quoted, 16);
	else
		memcpy(o, quoted, JSON_MAX_KEY + 4);
	return o + n;
}

void json_key_lit(struct json *j, const char *quoted, size_t n)
{
	if (!room(j, KEY_ROOM)) {
		key_after_flush(j, quoted, n);
		return;
	}
	j->len = (size_t)(key_at(j, quoted, n) - j->buf);
	j->need_comma[j->depth] = 2;
}

/*
 * Strings of 4 to 16 bytes, most of a dump's (states, kinds, names):
 * tested and copied as two words that overlap when n is not their
 * double, instead of a scan and a call to memcpy.  short_plain() tests,
 * short_put() writes it quoted at o (18 bytes of room at most).
 */
static inline int short_plain(const char *s, size_t n)
{
	unsigned char b[16];

	/* Both words tested as one block (the short one's twice). */
	if (n >= 8) {
		memcpy(b, s, 8);
		memcpy(b + 8, s + n - 8, 8);
	} else {
		memcpy(b, s, 4);
		memcpy(b + 4, s + n - 4, 4);
		memcpy(b + 8, b, 8);
	}
	return json_block_plain(b);
}

#define SHORT_ROOM (16 + 2)

static inline char *short_put(char *o, const char *s, size_t n)
{
	*o++ = '"';
	if (n >= 8) {
		memcpy(o, s, 8);
		memcpy(o + n - 8, s + n - 8, 8);
	} else {
		memcpy(o, s, 4);
		memcpy(o + n - 4, s + n - 4, 4);
	}
	o += n;
	*o++ = '"';
	return o;
}

static int short_plain_string(struct json *j, const char *s, size_t n)
{
	char *o;

	if (!short_plain(s, n))
		return 0;
	o = prefix_at(j, reserve(j, PREFIX_MAX + SHORT_ROOM));
	j->len = (size_t)(short_put(o, s, n) - j->buf);
	return 1;
}

/* A string that fits the buffer and needs no escaping, quoted: the
 * common case, in one copy. */
static int plain_string(struct json *j, const char *s, size_t n)
{
	char *o;

	if (n >= 4 && n <= 16)
		return short_plain_string(j, s, n);
	if (n > JSON_BUF / 4 || !json_all_plain((const unsigned char *)s, n))
		return 0;
	o = prefix_at(j, reserve(j, PREFIX_MAX + n + 2));
	*o++ = '"';
	memcpy(o, s, n);
	o += n;
	*o++ = '"';
	j->len = (size_t)(o - j->buf);
	return 1;
}

void json_key_str(struct json *j, const char *key)
{
	char *o;

	json_string(j, key);
	o = reserve(j, 2);
	o[0] = ':';
	o[1] = ' ';
	j->len += j->pretty ? 2 : 1;
	j->need_comma[j->depth] = 2;
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	if (plain_string(j, s, strlen(s)))
		return;
	value_prefix(j);
	put(j, '"');
	escape(j, s);
	put(j, '"');
}

__attribute__((cold, noinline))
static void hex_after_flush(struct json *j, uint64_t v)
{
	json_flush(j);
	json_hex(j, v);
}

void json_hex(struct json *j, uint64_t v)
{
	char *o;

	if (!room(j, HEX_ROOM)) {
		hex_after_flush(j, v);
		return;
	}
	o = prefix_at(j, j->buf + j->len);
	j->len = (size_t)(json_digits_hex(o, v) - j->buf);
}

__attribute__((cold, noinline))
static void int_after_flush(struct json *j, long long v)
{
	json_flush(j);
	json_int(j, v);
}

void json_int(struct json *j, long long v)
{
	unsigned long long u = (unsigned long long)v;
	char *o;

	if (!room(j, INT_ROOM)) {
		int_after_flush(j, v);
		return;
	}
	o = prefix_at(j, j->buf + j->len);
	if (v < 0) {
		*o++ = '-';
		u = 0 - u;
	}
	j->len = (size_t)(json_digits_uint(o, u) - j->buf);
}

/*
 * A literal key and its value in one call (json_key_int() and the
 * others in json.h): the same bytes as json_key() and the value's own
 * call, with one test for room and no state kept between the two.
 */
#define KEY_INT_ROOM (KEY_ROOM + 1 + JSON_UINT_ROOM)
#define KEY_ADDR_ROOM (KEY_ROOM + JSON_HEX_ROOM)
#define KEY_SHORT_ROOM (KEY_ROOM + SHORT_ROOM)

__attribute__((cold, noinline))
static void key_int_after_flush(struct json *j, const char *quoted,
				size_t n, long long v)
{
	json_flush(j);
	json_key_lit_int(j, quoted, n, v);
}

void json_key_lit_int(struct json *j, const char *quoted, size_t n,
		      long long v)
{
	unsigned long long u = (unsigned long long)v;
	char *o;

	if (!room(j, KEY_INT_ROOM)) {
		key_int_after_flush(j, quoted, n, v);
		return;
	}
	o = key_at(j, quoted, n);
	if (v < 0) {
		*o++ = '-';
		u = 0 - u;
	}
	j->len = (size_t)(json_digits_uint(o, u) - j->buf);
}

__attribute__((cold, noinline))
static void key_addr_after_flush(struct json *j, const char *quoted,
				 size_t n, uint64_t v)
{
	json_flush(j);
	json_key_lit_addr(j, quoted, n, v);
}

void json_key_lit_addr(struct json *j, const char *quoted, size_t n,
		       uint64_t v)
{
	char *o;

	_Static_assert(JSON_HEX_ROOM >= 4, "null fits where hex does");
	if (!room(j, KEY_ADDR_ROOM)) {
		key_addr_after_flush(j, quoted, n, v);
		return;
	}
	o = key_at(j, quoted, n);
	if (v) {
		o = json_digits_hex(o, v);
	} else {
		memcpy(o, "null", 4);
		o += 4;
	}
	j->len = (size_t)(o - j->buf);
}

/* json_key_lit_string() of anything but a short plain string (NULL,
 * long, to be escaped) or where there is no room: as json_key() and
 * json_string() do.  Apart, to keep the common path free of saved
 * registers. */
__attribute__((cold, noinline))
static void key_string_apart(struct json *j, const char *quoted, size_t n,
			     const char *s)
{
	json_key_lit(j, quoted, n);
	json_string(j, s);
}

void json_key_lit_string(struct json *j, const char *quoted, size_t n,
			 const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len < 4 || len > 16 || !room(j, KEY_SHORT_ROOM) ||
	    !short_plain(s, len)) {
		key_string_apart(j, quoted, n, s);
		return;
	}
	j->len = (size_t)(short_put(key_at(j, quoted, n), s, len) - j->buf);
}

void json_uint(struct json *j, unsigned long long v)
{
	char *o = prefix_at(j, reserve(j, PREFIX_MAX + JSON_UINT_ROOM));

	j->len = (size_t)(json_digits_uint(o, v) - j->buf);
}

void json_double(struct json *j, double v)
{
	char buf[64];
	int n;

	value_prefix(j);
	n = isfinite(v) ? snprintf(buf, sizeof(buf), "%.3f", v) : -1;
	if (n > 0 && (size_t)n < sizeof(buf))
		put_n(j, buf, (size_t)n);
	else
		put_n(j, "null", 4);
}

/* A value spelled in the source: its prefix and it in one reserve. */
static inline void put_word(struct json *j, const char *w, size_t n)
{
	char *o = prefix_at(j, reserve(j, PREFIX_MAX + n));

	memcpy(o, w, n);
	j->len = (size_t)(o + n - j->buf);
}

void json_bool(struct json *j, int v)
{
	if (v)
		put_word(j, "true", 4);
	else
		put_word(j, "false", 5);
}

void json_null(struct json *j)
{
	put_word(j, "null", 4);
}
