#include "cli/json.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

static void flush(struct json *j)
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

/* The top-level value is closed: everything reaches out now. */
static void flush_all(struct json *j)
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

static inline void put_n(struct json *j, const char *s, size_t n)
{
	char *o;

	if (n > j->cap - j->len) {
		flush(j);
		/* Bounded by n / cap rounds; through the buffers, so a writer
		 * thread keeps the order. */
		while (n > j->cap) {
			size_t k = j->cap;  /* flush() may start a writer,
					       whose blocks are larger */

			memcpy(j->buf, s, k);
			j->len = k;
			flush(j);
			s += k;
			n -= k;
		}
	}
	o = j->buf + j->len;
	j->len += n;
	/* Most pieces are a few bytes: not worth a call to memcpy. */
	if (n > 8) {
		memcpy(o, s, n);
		return;
	}
	while (n--)
		*o++ = *s++;
}

/* A newline and two spaces a level: as many as the deepest nesting. */
static const char spaces[] = "\n                                "
			     "                                ";
_Static_assert(sizeof(spaces) >= 2 * JSON_MAX_DEPTH + 1,
	       "one run of spaces for the deepest nesting");

static void indent(struct json *j)
{
	/* depth < JSON_MAX_DEPTH: checked when nesting */
	if (j->pretty)
		put_n(j, spaces, 2 * (size_t)j->depth + 1);
}

/*
 * The fast path of the writer: make room for n bytes at once, then
 * write through a pointer with no test per piece.  PREFIX_MAX is the
 * most a value's prefix takes (a comma and the deepest indent).
 */
#define PREFIX_MAX (1 + sizeof(spaces))

static inline char *reserve(struct json *j, size_t n)
{
	if (n > j->cap - j->len)
		flush(j);
	return j->buf + j->len;
}

/* value_prefix() into reserved room (PREFIX_MAX bytes at o).  The
 * indent is copied whole, a constant size the compiler turns into a few
 * vector moves, and the part that belongs is kept. */
static inline char *prefix_at(struct json *j, char *o)
{
	int *need = &j->need_comma[j->depth];

	if (*need == 2) {
		*need = 1;  /* after a key */
		return o;
	}
	if (*need)
		*o++ = ',';
	if (j->depth && j->pretty) {
		memcpy(o, spaces, sizeof(spaces) - 1);
		o += 2 * (size_t)j->depth + 1;
	}
	*need = 1;
	return o;
}

/* Before any value: a comma if needed (keys already wrote theirs). */
static void value_prefix(struct json *j)
{
	j->len = (size_t)(prefix_at(j, reserve(j, PREFIX_MAX)) - j->buf);
}

static void begin(struct json *j, char c)
{
	value_prefix(j);
	put(j, c);
	if (++j->depth >= JSON_MAX_DEPTH)
		CS_BUG("json nesting too deep");
	j->need_comma[j->depth] = 0;
}

static void finish(struct json *j, char c)
{
	int had = j->need_comma[j->depth];

	if (j->depth <= 0)
		CS_BUG("json close without open");
	j->depth--;
	if (had)
		indent(j);
	put(j, c);
	if (j->depth == 0) {
		put(j, '\n');
		flush_all(j);
	}
}

void json_begin_object(struct json *j) { begin(j, '{'); }
void json_end_object(struct json *j) { finish(j, '}'); }
void json_begin_array(struct json *j) { begin(j, '['); }
void json_end_array(struct json *j) { finish(j, ']'); }

/*
 * Characters written as they are: printable ASCII but '"' and '\\'.  A
 * table, since the scan over every byte of a large document is the
 * writer's inner loop.  (NUL is not plain: it ends the scan.)
 */
static const unsigned char plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  /* 0x10 */
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x20 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x30 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x40 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,  /* 0x50 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  /* 0x60 */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,  /* 0x70: not DEL */
	/* 0x80 - 0xff: 0 */
};

/*
 * Are all 16 bytes at p plain?  The same test on a vector of 16 bytes
 * (SSE2 on x86-64, NEON on arm64: GCC and clang both lower it): the
 * test for a byte below 0x20, above 0x7e, or equal to '"' or '\\'.
 */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

static int block_plain(const unsigned char *p)
{
	bytes16 v;
	uint64_t half[2];

	memcpy(&v, p, sizeof(v));
	v = (bytes16)((v < 0x20) | (v > 0x7e) | (v == '"') | (v == '\\'));
	memcpy(half, &v, sizeof(half));
	return (half[0] | half[1]) == 0;
}

typedef unsigned char bytes8 __attribute__((vector_size(8)));

static int word_plain(const unsigned char *p)
{
	bytes8 v;
	uint64_t w;

	memcpy(&v, p, sizeof(v));
	v = (bytes8)((v < 0x20) | (v > 0x7e) | (v == '"') | (v == '\\'));
	memcpy(&w, &v, sizeof(w));
	return w == 0;
}

/* Are all n bytes at p plain?  Whole blocks, then one block ending at
 * p + n that overlaps the last one tested: never a byte past the end. */
static int all_plain(const unsigned char *p, size_t n)
{
	size_t i;

	if (n >= 16) {
		for (i = 0; i + 16 <= n; i += 16)
			if (!block_plain(p + i))
				return 0;
		return i == n || block_plain(p + n - 16);
	}
	if (n >= 8)
		return word_plain(p) && word_plain(p + n - 8);
	for (i = 0; i < n; i++)
		if (!plain[p[i]])
			return 0;
	return 1;
}

/* The plain bytes from p on, up to end (a string's NUL): 16 bytes at a
 * time while 16 are left, then bytewise. */
static const unsigned char *plain_run(const unsigned char *p,
				      const unsigned char *end)
{
	while (end - p >= 16 && block_plain(p))
		p += 16;
	while (p < end && plain[*p])
		p++;
	return p;
}

static void escape(struct json *j, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + strlen(s);

	while (*p) {
		unsigned char c = *p;
		char u[8];
		int n = 0, k;

		if (plain[c]) {
			const unsigned char *run = p;

			p = plain_run(p, end);
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
	put_n(j, s, n);
	j->need_comma[j->depth] = need;
}

void json_escape(FILE *f, const char *s)
{
	struct json j;

	json_init(&j, f, 0);
	escape(&j, s);
	flush(&j);
}

void json_key_lit(struct json *j, const char *quoted, size_t n)
{
	/* n counts the space after the colon, which only pretty has. */
	char *o = reserve(j, PREFIX_MAX + JSON_MAX_KEY + 4);

	if (!j->pretty)
		n--;
	_Static_assert(sizeof(JSON_KEY_PAD) - 1 >= JSON_MAX_KEY,
		       "a key literal is padded to the block copied");
	o = prefix_at(j, o);
	memcpy(o, quoted, JSON_MAX_KEY + 4);
	j->len = (size_t)(o + n - j->buf);
	j->need_comma[j->depth] = 2;
}

/* A string that fits the buffer and needs no escaping, quoted: the
 * common case, in one copy. */
static int plain_string(struct json *j, const char *s, size_t n)
{
	char *o;

	if (n > JSON_BUF / 4 || !all_plain((const unsigned char *)s, n))
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
	json_string(j, key);
	put_n(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
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

/* The eight hex digits of x, most significant first, as the bytes of a
 * little-endian word: each nibble spread into a byte of its own, then
 * '0' added, and 'a' - '0' - 10 more where the nibble is above 9. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "hex8() builds its digits in a little-endian word");

static inline uint64_t hex8(uint32_t x)
{
	uint64_t w = x, above9;

	w = ((w & 0xffff0000u) << 16) | (w & 0x0000ffffu);
	w = ((w & 0x0000ff000000ff00u) << 8) | (w & 0x000000ff000000ffu);
	w = ((w & 0x00f000f000f000f0u) << 4) | (w & 0x000f000f000f000fu);
	/* Now byte k holds nibble k counted from the least significant. */
	above9 = ((w + 0x0606060606060606u) >> 4) & 0x0101010101010101u;
	w += 0x3030303030303030u + above9 * ('a' - '0' - 10);
	return __builtin_bswap64(w);
}

void json_hex(struct json *j, uint64_t v)
{
	char *o = prefix_at(j, reserve(j, PREFIX_MAX + 24));
	size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
	/* The sixteen digits in order, then room for the fixed-size copy
	 * of the last n of them to read past them. */
	uint64_t digits[4] = { hex8((uint32_t)(v >> 32)), hex8((uint32_t)v),
			       0, 0 };

	/* "0x%llx" by hand: a dump writes an id for every task and frame. */
	o[0] = '"';
	o[1] = '0';
	o[2] = 'x';
	memcpy(o + 3, (const char *)digits + 16 - n, 16);
	o[3 + n] = '"';
	j->len = (size_t)(o + 4 + n - j->buf);
}

/* Decimal digits of v, without printf's parsing of a format. */
static void put_uint(struct json *j, unsigned long long v)
{
	char buf[24];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_n(j, buf + i, sizeof(buf) - i);
}

void json_int(struct json *j, long long v)
{
	value_prefix(j);
	if (v < 0) {
		put(j, '-');
		put_uint(j, 0 - (unsigned long long)v);
	} else {
		put_uint(j, (unsigned long long)v);
	}
}

void json_uint(struct json *j, unsigned long long v)
{
	value_prefix(j);
	put_uint(j, v);
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

void json_bool(struct json *j, int v)
{
	value_prefix(j);
	if (v)
		put_n(j, "true", 4);
	else
		put_n(j, "false", 5);
}

void json_null(struct json *j)
{
	value_prefix(j);
	put_n(j, "null", 4);
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
	p->j.depth = j->depth;
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
