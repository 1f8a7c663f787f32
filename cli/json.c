#include "cli/json.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/json_digits.h"
#include "cli/json_plain.h"
#include "cli/json_writer.h"
#include "common/error.h"
#include "common/hugeheap.h"
#include "common/strbuf.h"
#include "common/util.h"
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

static void part_next_chunk(struct json *j);

void json_background(struct json *j)
{
	j->background = 1;
}

/* Cold: once a buffer, against millions of values, whose functions then
 * keep nothing in saved registers on their way past it. */
__attribute__((cold)) static void flush(struct json *j)
{
	j->flushes++;
	if (j->part) {
		part_next_chunk(j);
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
 * and apart, like flush().) */
__attribute__((cold, noinline)) static void flush_all(struct json *j)
{
	/* A document that ends within its first buffer needs no thread. */
	j->background = 0;
	if (!j->writer) {
		flush(j);
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
		flush(j);
	j->buf[j->len++] = (char)c;
}

/* put_n() of more than the room left: in pieces through the buffers
 * (bounded by n / cap rounds), so that a writer thread keeps the
 * order.  Apart and cold, like flush(). */
__attribute__((cold, noinline))
static void put_long(struct json *j, const char *s, size_t n)
{
	flush(j);
	while (n > j->cap) {
		size_t k = j->cap;  /* flush() may start a writer, whose
				       blocks are larger */

		memcpy(j->buf, s, k);
		j->len = k;
		flush(j);
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

/* Every change of depth comes here, to keep indent with it: none at
 * the top level, where the document starts. */
static inline void set_depth(struct json *j, int depth)
{
	j->depth = depth;
	j->indent = depth ? line_start(j, depth) : 0;
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
		flush(j);
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

void json_escape(FILE *f, const char *s)
{
	struct json j;

	json_init(&j, f, 0);
	escape(&j, s);
	flush(&j);
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
	flush(j);
	json_key_lit(j, quoted, n);
}

void json_key_lit(struct json *j, const char *quoted, size_t n)
{
	char *o;

	if (!room(j, KEY_ROOM)) {
		key_after_flush(j, quoted, n);
		return;
	}
	/* n counts the space after the colon, which only pretty has. */
	n -= !j->pretty;
	_Static_assert(sizeof(JSON_KEY_PAD) - 1 >= JSON_MAX_KEY,
		       "a key literal is padded to the block copied");
	o = prefix_at(j, j->buf + j->len);
	/* Most keys fit one move of 16 bytes (every literal has that many,
	 * its padding included). */
	if (n <= 16)
		memcpy(o, quoted, 16);
	else
		memcpy(o, quoted, JSON_MAX_KEY + 4);
	j->len = (size_t)(o + n - j->buf);
	j->need_comma[j->depth] = 2;
}

/* plain_string() of 4 to 16 bytes, most of a dump's (states, kinds,
 * names): two words that overlap when n is not their double, tested
 * together and stored as they were loaded, instead of a scan and a call
 * to memcpy. */
static int short_plain_string(struct json *j, const char *s, size_t n)
{
	/* Set, for the compilers that cannot tell n >= 8 is tested twice
	 * alike (the sanitizers' builds). */
	uint64_t head = 0, tail = 0;
	uint32_t head4 = 0, tail4 = 0;
	char *o;

	if (n >= 8) {
		memcpy(&head, s, 8);
		memcpy(&tail, s + n - 8, 8);
		if (!json_u64_plain(head) || !json_u64_plain(tail))
			return 0;
	} else {
		memcpy(&head4, s, 4);
		memcpy(&tail4, s + n - 4, 4);
		if (!json_u64_plain(head4 | (uint64_t)tail4 << 32))
			return 0;
	}
	o = prefix_at(j, reserve(j, PREFIX_MAX + 16 + 2));
	*o++ = '"';
	if (n >= 8) {
		memcpy(o, &head, 8);
		memcpy(o + n - 8, &tail, 8);
	} else {
		memcpy(o, &head4, 4);
		memcpy(o + n - 4, &tail4, 4);
	}
	o += n;
	*o++ = '"';
	j->len = (size_t)(o - j->buf);
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
	flush(j);
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
	flush(j);
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

/*
 * Parts made by another thread.  A 10k-task dump is 34 MB of JSON, half
 * of its time spent making it; its "tasks" and "generators" arrays are
 * about the same size and made from data nothing changes any more, so
 * a second core makes the one while the first makes the other.
 *
 * Until the join the part's bytes wait in chunks on huge pages (small
 * pages would fault one by one as they fill), at most PART_AHEAD of
 * them: a 100k-task dump's generators are 130 MB, which coroscope would
 * hold at once (and pay for as fresh memory).  A part that gets that
 * far ahead waits for the join.  From the join on, with a writer thread,
 * the chunks are queued on it as they fill (the joining thread waits
 * for the part to end before it writes on); without one, they are kept
 * and copied once the part ends.
 */
#define PART_CHUNK ((size_t)2 << 20)
#define PART_AHEAD ((size_t)32 << 20)

struct part_chunk {
	char *mem;
	size_t len;
};

struct json_part {
	struct json j;            /* the part's writer: j.part points back */
	json_part_fn *fn;
	const void *arg;
	int depth;                /* where it goes in the document */
	int threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t joined;
	/* Set at the join: the writer thread the chunks go to from then
	 * on, or, without one, keep them all. */
	int released;
	struct json_writer *to;
	struct part_chunk *chunks;  /* full ones waiting, in order */
	size_t nchunks, achunks;
};

static void part_map_chunk(struct json *j)
{
	j->buf = hugeheap_map(PART_CHUNK);
	if (!j->buf)
		xdie_out_of_memory();
	j->cap = PART_CHUNK;
	j->len = 0;
}

static void part_hand(struct json_writer *w, const struct part_chunk *c)
{
	json_writer_hand(w, c->mem, c->len, hugeheap_size(PART_CHUNK));
}

/* flush() of a part: keep the full chunk (or, once released to a writer
 * thread, queue it there), go on in a new one. */
static void part_next_chunk(struct json *j)
{
	struct json_part *p = j->part;
	struct part_chunk c = { j->buf, j->len };

	if (!j->len)
		return;
	pthread_mutex_lock(&p->lock);
	while (!p->released && p->nchunks * PART_CHUNK >= PART_AHEAD)
		pthread_cond_wait(&p->joined, &p->lock);
	if (p->to) {
		part_hand(p->to, &c);
	} else {
		p->chunks = xgrow(p->chunks, &p->achunks, p->nchunks + 1,
				  sizeof(*p->chunks));
		p->chunks[p->nchunks++] = c;
	}
	pthread_mutex_unlock(&p->lock);
	part_map_chunk(j);
}

static void *part_run(void *arg)
{
	struct json_part *p = arg;

	p->fn(&p->j, p->arg);
	return NULL;
}

int json_parts_worth_it(void)
{
	return cs_cpus() >= 3;
}

struct json_part *json_part_start(const struct json *j, json_part_fn *fn,
				  const void *arg)
{
	struct json_part *p = xcalloc(1, sizeof(*p));

	p->fn = fn;
	p->arg = arg;
	p->depth = j->depth;
	if (j->depth <= 0)
		CS_BUG("a json part outside any object or array");
	json_init(&p->j, NULL, j->pretty);
	set_depth(&p->j, j->depth);
	p->j.need_comma[j->depth] = 1;
	p->j.part = p;
	part_map_chunk(&p->j);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->joined, NULL);
	/* It writes nothing to any stream. */
	p->threaded = cs_thread_start(&p->thread, part_run, p, 0) == 0;
	return p;
}

void json_part_join(struct json *j, struct json_part *p)
{
	struct part_chunk last;
	size_t i;

	if (j->depth != p->depth || j->need_comma[j->depth] != 1)
		CS_BUG("a json part joined at depth %d (made for %d, after "
		       "a member)", j->depth, p->depth);
	if (!p->threaded) {
		p->fn(j, p->arg);
	} else {
		/* What j made so far goes first (a writer thread may start
		 * here, a large document's first block being full). */
		flush(j);
		pthread_mutex_lock(&p->lock);
		if (j->writer) {
			for (i = 0; i < p->nchunks; i++)
				part_hand(j->writer, &p->chunks[i]);
			p->nchunks = 0;
			p->to = j->writer;
		}
		p->released = 1;
		pthread_cond_broadcast(&p->joined);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		if (p->j.depth != p->depth)
			CS_BUG("a json part left open");
		/* Kept chunks (no writer thread): copied through j. */
		for (i = 0; i < p->nchunks; i++) {
			put_n(j, p->chunks[i].mem, p->chunks[i].len);
			munmap(p->chunks[i].mem, hugeheap_size(PART_CHUNK));
		}
		last.mem = p->j.buf;
		last.len = p->j.len;
		put_n(j, last.mem, last.len);
	}
	munmap(p->j.buf, hugeheap_size(PART_CHUNK));
	pthread_cond_destroy(&p->joined);
	pthread_mutex_destroy(&p->lock);
	free(p->chunks);
	free(p);
}
