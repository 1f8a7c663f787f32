/*
 * The JSON writer's escaping (cli/json.c), which scans strings 16 bytes
 * at a time and copies keys as it scans them: every byte value at every
 * position of a block and of the tail, in values and in keys, must come
 * out as the byte-by-byte rules say, and nothing around it may change.
 * Keys written from literals (json_key, copied as a block) and addresses
 * (json_hex) must come out as the general path and printf would write
 * them, at every depth and across the buffer's flushes; a key and its
 * value in one call (json_key_int() and the others) as the two calls.
 */
#include "cli/json.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "common/hugeheap.h"
#include "common/jobs.h"
#include "tests/support/digest_stream.h"
#include "tests/support/thread_count.h"
#include "tests/unit/check.h"

static struct json j;

/* A stream writing into *buf, the writer started on it. */
static FILE *start(char **buf, size_t *len, int pretty)
{
	FILE *f;

	*buf = NULL;
	*len = 0;
	f = open_memstream(buf, len);
	if (!f)
		abort();
	json_init(&j, f, pretty);
	return f;
}

/* What the writer makes of the string s, as value (key 0) or key. */
static char *written(const char *s, int key)
{
	char *buf;
	size_t len;
	FILE *f = start(&buf, &len, 0);

	json_begin_object(&j);
	if (key) {
		json_key_str(&j, s);
		json_int(&j, 1);
	} else {
		json_key(&j, "k");
		json_string(&j, s);
	}
	json_end_object(&j);
	fclose(f);
	return buf;
}

/* The document the writer must give for a string written as escaped. */
static char *expected(const char *escaped, int key)
{
	size_t n = strlen(escaped) + 16;
	char *out = malloc(n);

	if (!out)
		abort();
	if (key)
		snprintf(out, n, "{\"%s\":1}\n", escaped);
	else
		snprintf(out, n, "{\"k\":\"%s\"}\n", escaped);
	return out;
}

/* The byte-by-byte rule for one byte standing alone (a byte >= 0x80
 * alone is never valid UTF-8). */
static void one_byte(unsigned char b, char *out, size_t n)
{
	if (b == '"' || b == '\\')
		snprintf(out, n, "\\%c", b);
	else if (b < 0x20 || b == 0x7f)
		snprintf(out, n, "\\u%04x", b);
	else if (b >= 0x80)
		snprintf(out, n, "\\ufffd");
	else
		snprintf(out, n, "%c", b);
}

/* s = pre plain bytes, then mid, then post plain bytes; escaped = the
 * same with mid_escaped in its place. */
static void check_at_position(const char *mid, const char *mid_escaped,
			      size_t pre, size_t post)
{
	char s[256], e[256];
	size_t i, k;
	int key;

	for (i = 0; i < pre; i++)
		s[i] = e[i] = (char)('a' + i % 26);
	snprintf(s + pre, sizeof(s) - pre, "%s", mid);
	snprintf(e + pre, sizeof(e) - pre, "%s", mid_escaped);
	k = strlen(s);
	for (i = 0; i < post; i++)
		s[k + i] = (char)('A' + i % 26);
	s[k + post] = 0;
	k = strlen(e);
	for (i = 0; i < post; i++)
		e[k + i] = (char)('A' + i % 26);
	e[k + post] = 0;
	for (key = 0; key <= 1; key++) {
		char *got = written(s, key), *want = expected(e, key);

		CHECK(strcmp(got, want) == 0,
		      "%s of %zu+%zu bytes around %s: got %s want %s",
		      key ? "key" : "value", pre, post, mid_escaped, got, want);
		free(got);
		free(want);
	}
}

static void every_byte_everywhere(void)
{
	unsigned b;
	size_t pre, post;

	for (b = 1; b < 256; b++) {
		char mid[2] = { (char)b, 0 }, esc[8];

		one_byte((unsigned char)b, esc, sizeof(esc));
		/* Across the first two 16-byte blocks and the tails after
		 * them. */
		for (pre = 0; pre <= 34; pre++)
			for (post = 0; post <= 17; post += 1 + (pre % 3))
				check_at_position(mid, esc, pre, post);
	}
}

static void utf8_sequences(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "\xc3\xa9", "\xc3\xa9" },                 /* e acute */
		{ "\xe2\x82\xac", "\xe2\x82\xac" },         /* euro */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" }, /* emoji */
		{ "\xc2\x85", "\\u0085" },                  /* C1: NEL */
		{ "\xc2\x9f", "\\u009f" },
		{ "\xc2\xa0", "\xc2\xa0" },                 /* not C1 */
		{ "\xe0\x80\x80", "\\ufffd\\ufffd\\ufffd" }, /* overlong */
		/* a str's lone surrogate and NUL as readers/objects.c keeps
		 * them: as Python's json writes them */
		{ "\xed\xa0\x80", "\\ud800" },
		{ "\xed\xb3\xbf", "\\udcff" },
		{ "\xc0\x80", "\\u0000" },
		{ "\xed\x9f", "\\ufffd\\ufffd" },        /* cut short */
		{ "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },
		{ "\xc3", "\\ufffd" },                      /* cut short */
	};
	size_t i, pre;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (pre = 0; pre <= 20; pre++)
			check_at_position(cases[i].in, cases[i].out, pre, pre % 5);
}

/* Longer than the writer's buffer: written straight through. */
static void long_string(void)
{
	size_t n = 3 * JSON_BUF + 7, i;
	char *s = malloc(n + 1), *got, *want;

	if (!s)
		abort();
	for (i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	s[n] = 0;
	got = written(s, 0);
	want = expected(s, 0);
	CHECK(strcmp(got, want) == 0, "a string of %zu bytes", n);
	free(got);
	free(want);
	s[JSON_BUF + 3] = '"';
	got = written(s, 1);
	CHECK(strstr(got, "\\\"") != NULL && strlen(got) == n + 8,
	      "a key of %zu bytes with a quote: %zu bytes out", n,
	      strlen(got));
	free(got);
	free(s);
}

/* A document of every depth, with keys and hex values, written twice:
 * literal keys or json_key_str(), and each value by json_hex() or as
 * the string printf makes of it. */
static char *nested(int pretty, int literal)
{
	char *buf, hex[24];
	size_t len;
	FILE *f = start(&buf, &len, pretty);
	uint64_t v = 0x9e3779b97f4a7c15u;
	int d, rep;

	json_begin_array(&j);
	/* Enough to fill the buffer several times over. */
	for (rep = 0; rep < 300; rep++) {
		for (d = 1; d <= (JSON_MAX_DEPTH - 2) / 2; d++) {
			json_begin_object(&j);
			if (literal)
				json_key(&j, "id");
			else
				json_key_str(&j, "id");
			v = v * 6364136223846793005u + 1442695040888963407u;
			/* every digit count from 1 to 16 */
			v >>= (unsigned)(d + rep) % 64;
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)v);
			if (literal)
				json_hex(&j, v);
			else
				json_string(&j, hex);
			if (literal)
				json_key(&j, "a_rather_longer_key_name_of_forty_bytes");
			else
				json_key_str(&j, "a_rather_longer_key_name_of_forty_bytes");
			json_begin_array(&j);
		}
		for (d = (JSON_MAX_DEPTH - 2) / 2; d >= 1; d--) {
			json_end_array(&j);
			json_end_object(&j);
		}
	}
	json_end_array(&j);
	fclose(f);
	return buf;
}

static void literal_keys_and_hex(void)
{
	int pretty;

	for (pretty = 0; pretty <= 1; pretty++) {
		char *fast = nested(pretty, 1), *slow = nested(pretty, 0);

		CHECK(strcmp(fast, slow) == 0,
		      "%s: literal keys and json_hex differ from the general "
		      "path (%zu and %zu bytes)", pretty ? "pretty" : "compact",
		      strlen(fast), strlen(slow));
		free(fast);
		free(slow);
	}
}

static void hex_values(void)
{
	uint64_t v;
	int bit, pretty;

	for (pretty = 0; pretty <= 1; pretty++)
		for (bit = -1; bit < 64; bit++) {
			char *buf, want[64];
			size_t len;
			FILE *f = start(&buf, &len, pretty);

			v = bit < 0 ? 0 : (uint64_t)1 << bit;
			json_begin_array(&j);
			json_hex(&j, v);
			json_hex(&j, v ? v | (v - 1) : 0);
			json_end_array(&j);
			fclose(f);
			snprintf(want, sizeof(want),
				 pretty ? "[\n  \"0x%llx\",\n  \"0x%llx\"\n]\n"
					: "[\"0x%llx\",\"0x%llx\"]\n",
				 (unsigned long long)v,
				 (unsigned long long)(v ? v | (v - 1) : 0));
			CHECK(strcmp(buf, want) == 0, "hex %llx: got %s",
			      (unsigned long long)v, buf);
			free(buf);
		}
}

/* The indentation and commas, against a document written out by hand. */
static void pretty_layout(void)
{
	static const char want[] =
		"{\n  \"a\": {\n    \"b\": [\n      1,\n      \"0x2a\"\n    ],"
		"\n    \"c\": {}\n  },\n  \"d\": []\n}\n";
	char *buf;
	size_t len;
	FILE *f = start(&buf, &len, 1);

	json_begin_object(&j);
	json_key(&j, "a");
	json_begin_object(&j);
	json_key_str(&j, "b");
	json_begin_array(&j);
	json_int(&j, 1);
	json_hex(&j, 42);
	json_end_array(&j);
	json_key(&j, "c");
	json_begin_object(&j);
	json_end_object(&j);
	json_end_object(&j);
	json_key(&j, "d");
	json_begin_array(&j);
	json_end_array(&j);
	json_end_object(&j);
	fclose(f);
	CHECK(strcmp(buf, want) == 0, "pretty layout: got %s", buf);
	free(buf);
}

/* A document of every kind of value, large enough to pass through many
 * of a writer thread's blocks, with a string longer than one block. */
static void big_document(int background, FILE *f)
{
	static char huge[3 << 20];
	size_t i;

	memset(huge, 'x', sizeof(huge) - 1);
	json_init(&j, f, 1);
	if (background)
		json_background(&j);
	json_begin_object(&j);
	json_key(&j, "items");
	json_begin_array(&j);
	for (i = 0; i < 200000; i++) {
		json_begin_object(&j);
		json_key(&j, "i");
		json_uint(&j, i);
		json_key(&j, "addr");
		json_hex(&j, i * 0x1000 + 0x7f0000000000ull);
		json_key_str(&j, i % 7 ? "name" : "n\"q");
		json_string(&j, i % 3 ? "plain text here" : "tab\there");
		json_end_object(&j);
	}
	json_end_array(&j);
	json_key(&j, "huge");
	json_string(&j, huge);
	json_end_object(&j);
}

/* Threads beyond the main one and the job workers kept idle
 * (common/jobs.h), once a worker that ended is gone (seen once: "2
 * threads after a large document"); -1 for a job not joined.  With
 * every job joined, any such thread is one a writer or a part left
 * running. */
static int threads(void)
{
	size_t idle, unjoined;

	cs_jobs_count(&idle, &unjoined);
	if (unjoined)
		return -1;
	return thread_count_settled(1 + (int)idle) - (int)idle;
}

/* Written by a writer thread, the document is the one written in line;
 * a failed write shows in the stream's error indicator.  A document
 * that fits its first buffer starts no thread, and none outlives its
 * document. */
static void background_writer(void)
{
	char *a, *b;
	size_t la, lb;
	FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
	FILE *full;

	if (!fa || !fb)
		abort();
	json_init(&j, fa, 1);
	json_background(&j);
	json_begin_array(&j);
	json_string(&j, "small");
	json_end_array(&j);
	CHECK(threads() == 1, "%d threads after a small document (-1: a job unjoined)",
	      threads());
	fclose(fa);
	free(a);
	fa = open_memstream(&a, &la);
	if (!fa)
		abort();
	big_document(0, fa);
	big_document(1, fb);
	CHECK(threads() == 1, "%d threads after a large document (-1: a job unjoined)",
	      threads());
	fclose(fa);
	fclose(fb);
	CHECK(la > 4 * JSON_WRITER_BLOCK && la == lb && memcmp(a, b, la) == 0,
	      "background document: %zu bytes, in line %zu", lb, la);
	free(a);
	free(b);
	full = fopen("/dev/full", "w");
	if (!full) {
		printf("skip: /dev/full is absent\n");
		return;
	}
	big_document(1, full);
	CHECK(ferror(full), "a failed write left no error");
	fclose(full);
}

/* Items i from *arg on (a count of them: big enough to fill chunks),
 * nested one level, as members of the enclosing object.  With a gate,
 * not before it opens; the thread that made them and their end are
 * noted. */
struct items {
	size_t from, n;
	const int *gate;
	int *opens;     /* set at its end, when not NULL */
	pthread_t by;
	int started, ended;
};

/* Wait (up to a minute) for *flag, which another thread sets. */
static int wait_for(const int *flag)
{
	struct timespec ms = { 0, 1000000 };
	int i;

	for (i = 0; i < 60000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ms, NULL);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static void items(struct json *w, const void *arg)
{
	struct items *it = (struct items *)arg;
	size_t i;

	if (it->gate && !wait_for(it->gate))
		abort();
	it->by = pthread_self();
	__atomic_store_n(&it->started, 1, __ATOMIC_RELEASE);
	json_key(w, "items");
	json_begin_array(w);
	for (i = it->from; i < it->from + it->n; i++) {
		json_begin_object(w);
		json_key(w, "i");
		json_uint(w, i);
		json_key_str(w, i % 5 ? "addr" : "a\tb");
		json_hex(w, i * 0x40 + 0x7f0000000000ull);
		json_end_object(w);
	}
	json_end_array(w);
	__atomic_store_n(&it->ended, 1, __ATOMIC_RELEASE);
	if (it->opens)
		__atomic_store_n(it->opens, 1, __ATOMIC_RELEASE);
}

/* The items of part p joined here, or, without a part, made here. */
static void items_here(struct json_part *p, const struct items *it)
{
	if (p)
		json_part_join(&j, p);
	else
		items(&j, it);
}

/* How doc_with_items() makes its two parts. */
enum parts_how {
	IN_LINE,       /* no part */
	AT_ONCE,       /* two parts, each on a thread */
	AFTER,         /* the second after the first, on its thread */
	AFTER_HELPED,  /* the same, but the first still being made at its
			  join: the second made by the joining thread */
	AFTER_ENDED,   /* the same, asked once the first has ended */
};

/* The document, with its "items" made in parts (or in line). */
static void doc_with_items(FILE *f, int pretty, int background,
			   enum parts_how how, size_t n)
{
	int open = 0;
	struct items it = { 7, n, NULL, NULL, 0, 0, 0 };
	/* (as many as the first: the largest, made by a join, is past
	 * what a part holds before its own) */
	struct items more = { 1, n, NULL, NULL, 0, 0, 0 };
	struct json_part *p = NULL, *q = NULL;
	size_t i;

	json_init(&j, f, pretty);
	if (background)
		json_background(&j);
	json_begin_object(&j);
	json_key(&j, "first");
	json_string(&j, "before the part starts");
	/* Two parts, the second joined after more of j's own. */
	if (how == AT_ONCE) {
		p = json_part_start(&j, items, &it);
		q = json_part_start(&j, items, &more);
	} else if (how == AFTER) {
		/* (the first waits for the second to be attached) */
		it.gate = &open;
		p = json_part_start(&j, items, &it);
		q = json_part_start_after(&j, p, items, &more);
		__atomic_store_n(&open, 1, __ATOMIC_RELEASE);
	} else if (how == AFTER_HELPED) {
		/* The first waits for the second, which the join of the
		 * first finds not begun: the first's thread waits. */
		it.gate = &open;
		more.opens = &open;
		p = json_part_start(&j, items, &it);
		q = json_part_start_after(&j, p, items, &more);
	} else if (how == AFTER_ENDED) {
		p = json_part_start(&j, items, &it);
		if (!wait_for(&it.ended))
			abort();
		q = json_part_start_after(&j, p, items, &more);
	}
	json_key(&j, "between");
	json_begin_array(&j);
	json_string(&j, "written while the part is made");
	/* As many again: a writer thread, where there is one, runs before
	 * the join when the part is large. */
	for (i = 0; i < n; i++)
		json_uint(&j, i);
	json_end_array(&j);
	/* The second begun on the first's thread before the first's join
	 * (bounded: a minute), so that the join does not make it. */
	if (how == AFTER && !wait_for(&more.started))
		abort();
	items_here(p, &it);
	json_key(&j, "after the first part");
	json_null(&j);
	items_here(q, &more);
	json_key(&j, "last");
	json_null(&j);
	json_end_object(&j);
	/* Where the parts were made: an attached one on its first's thread,
	 * which is not this one; one attached too late on another. */
	if (how == AFTER)
		CHECK(pthread_equal(it.by, more.by) &&
		      !pthread_equal(it.by, pthread_self()),
		      "a part made after another not on that one's thread");
	if (how == AFTER_HELPED)
		CHECK(!pthread_equal(it.by, pthread_self()) &&
		      pthread_equal(more.by, pthread_self()),
		      "a part after one still made at its join not made by "
		      "the joining thread");
	if (how == AT_ONCE || how == AFTER_ENDED)
		CHECK(!pthread_equal(it.by, pthread_self()) &&
		      !pthread_equal(more.by, pthread_self()),
		      "a part (%d) made on the joining thread", (int)how);
}

/* A part made on another thread comes out as the same bytes as in line:
 * small and large (over several of its chunks and of a writer thread's
 * blocks; the largest, pretty, more than a part holds before its join),
 * pretty and compact, with and without a writer thread; and no thread
 * outlives it. */
#define JUNK_BYTES ((size_t)8 << 20)

/* Empty hugeheap's kept memory.  Bounded: each take empties at least a
 * huge page of it. */
static void drain_kept(void)
{
	size_t n = hugeheap_kept(), i;

	for (i = 0; i < n / (2u << 20) && hugeheap_kept(); i++)
		munmap(hugeheap_take(2u << 20), 2u << 20);
}

/* Kept memory full of bytes of no document's, for the parts' chunks and
 * the writer's blocks to be cut from. */
static void keep_junk(void)
{
	char *m = hugeheap_map(JUNK_BYTES);

	if (!m)
		abort();
	memset(m, '#', JUNK_BYTES);
	hugeheap_keep(m, JUNK_BYTES);
}

/* A part's chunks come from kept memory; with two CPUs a part is worth
 * it only when enough is kept, and only one at a time (main() says two
 * CPUs). */
static void parts_kept(void)
{
	struct json_part *p;
	struct items it = { 1, 3, NULL, NULL, 0, 0, 0 };
	char *buf;
	size_t len;
	FILE *f;

	drain_kept();
	CHECK(!json_parts_worth_it(1) && !json_parts_worth_it(2),
	      "a part on two CPUs with nothing kept");
	keep_junk();
	CHECK(json_parts_worth_it(1) && !json_parts_worth_it(2),
	      "with %zu kept: one part, not two", hugeheap_kept());
	f = start(&buf, &len, 0);
	json_begin_object(&j);
	json_key(&j, "first");
	json_null(&j);
	p = json_part_start(&j, items, &it);
	CHECK(hugeheap_kept() == JUNK_BYTES - (2u << 20),
	      "the part's first chunk not cut from kept memory (%zu kept)",
	      hugeheap_kept());
	json_part_join(&j, p);
	json_end_object(&j);
	fclose(f);
	CHECK(strstr(buf, "#") == NULL && hugeheap_kept() == JUNK_BYTES,
	      "%s (%zu kept after)", buf, hugeheap_kept());
	free(buf);
	drain_kept();
}

/* A document of three item lists at one level, in line or as a chain
 * of three parts, the third attached after the second: the first held
 * until the second ends, so that its join makes the second. */
static void three_lists(FILE *f, int chained, struct items *r)
{
	int open = 0;
	struct items p_it = { 1, 1000, NULL, NULL, 0, 0, 0 };
	struct items q_it = { 2, 1000, NULL, NULL, 0, 0, 0 };
	struct json_part *p = NULL, *q = NULL, *rp = NULL;

	json_init(&j, f, 0);
	json_begin_object(&j);
	json_key(&j, "first");
	json_null(&j);
	if (chained) {
		p_it.gate = &open;
		q_it.opens = &open;
		p = json_part_start(&j, items, &p_it);
		q = json_part_start_after(&j, p, items, &q_it);
		rp = json_part_start_after(&j, q, items, r);
	}
	items_here(p, &p_it);
	items_here(q, &q_it);
	items_here(rp, r);
	json_end_object(&j);
}

/* A part attached after a part itself attached is made all the same
 * (on a thread of its own), and the document is the one in line. */
static void three_parts(void)
{
	struct items r_a = { 3, 1000, NULL, NULL, 0, 0, 0 };
	struct items r_b = { 3, 1000, NULL, NULL, 0, 0, 0 };
	struct digest a, b;
	FILE *fa = digest_open(&a), *fb = digest_open(&b);

	if (!fa || !fb)
		abort();
	three_lists(fa, 0, &r_a);
	keep_junk();
	three_lists(fb, 1, &r_b);
	fclose(fa);
	fclose(fb);
	CHECK(digest_equal(&a, &b) && r_b.ended,
	      "three parts in a chain: %zu bytes against %zu in line (the "
	      "third made: %d)", b.len, a.len, r_b.ended);
	drain_kept();
}

static void parts(void)
{
	static const size_t sizes[] = { 0, 3, 150000, 800000 };
	size_t s;
	int pretty, background, how;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (pretty = 0; pretty < 2; pretty++)
			for (background = 0; background < 2; background++)
			for (how = AT_ONCE; how <= AFTER_ENDED; how++) {
				struct digest a, b;
				FILE *fa, *fb;

				/* (a part past PART_AHEAD waits for its
				 * join: it would never end before, nor its
				 * thread begin the next) */
				if ((how == AFTER_ENDED || how == AFTER) &&
				    sizes[s] > 150000)
					continue;
				fa = digest_open(&a);
				fb = digest_open(&b);
				if (!fa || !fb)
					abort();
				doc_with_items(fa, pretty, background, IN_LINE,
					       sizes[s]);
				/* Whatever the parts' memory held before
				 * stays out of the document. */
				keep_junk();
				doc_with_items(fb, pretty, background,
					       (enum parts_how)how, sizes[s]);
				fclose(fa);
				fclose(fb);
				CHECK(digest_equal(&a, &b),
				      "parts of %zu items (pretty %d, "
				      "background %d, made %d): %zu bytes "
				      "against %zu in line, or other bytes",
				      sizes[s], pretty, background, how, b.len,
				      a.len);
				CHECK(sizes[s] < 150000 ||
				      a.len > (sizes[s] / 150000) * (4u << 20),
				      "the large part is %zu bytes", a.len);
				drain_kept();
			}
	CHECK(threads() == 1, "%d threads after the parts (-1: a job unjoined)",
	      threads());
}

/* Integers as printf writes them: every power of ten and its
 * neighbours (where the count of digits changes), every power of two
 * and its neighbours (where the bit length does), the ends of both
 * types, signed and unsigned. */
static void check_decimal(long long v, int as_unsigned)
{
	int pretty;

	for (pretty = 0; pretty <= 1; pretty++) {
		char *buf, want[96];
		size_t len;
		FILE *f = start(&buf, &len, pretty);

		json_begin_array(&j);
		if (as_unsigned)
			json_uint(&j, (unsigned long long)v);
		else
			json_int(&j, v);
		json_int(&j, 7);
		json_end_array(&j);
		fclose(f);
		if (as_unsigned)
			snprintf(want, sizeof(want),
				 pretty ? "[\n  %llu,\n  7\n]\n" : "[%llu,7]\n",
				 (unsigned long long)v);
		else
			snprintf(want, sizeof(want),
				 pretty ? "[\n  %lld,\n  7\n]\n" : "[%lld,7]\n",
				 v);
		CHECK(strcmp(buf, want) == 0, "%s %lld: got %s",
		      as_unsigned ? "uint" : "int", v, buf);
		free(buf);
	}
}

static void decimal_values(void)
{
	unsigned long long p = 1;
	int i, d;

	for (i = 0; i < 20; i++, p *= 10)
		for (d = -1; d <= 1; d++) {
			check_decimal((long long)(p + (unsigned long long)d), 1);
			check_decimal((long long)(p + (unsigned long long)d), 0);
			check_decimal(-(long long)(p + (unsigned long long)d) *
					      (i < 19), 0);
		}
	for (i = 0; i < 64; i++)
		for (d = -1; d <= 1; d++) {
			unsigned long long v = (1ull << i) + (unsigned long long)d;

			check_decimal((long long)v, 1);
			check_decimal((long long)v, 0);
		}
	check_decimal(0, 0);
	check_decimal(0, 1);
	check_decimal(-1, 1);          /* UINT64_MAX */
	check_decimal(INT64_MAX, 0);
	check_decimal(INT64_MIN, 0);
	check_decimal(INT64_MIN + 1, 0);
	check_decimal(-99, 0);
	check_decimal(-100, 0);
}

/* Object level (0 the outermost) nested in its writer, and the same
 * written out by hand at w: a null, an array of two booleans and the
 * next level (the indent is copied as one block whose size depends on
 * the depth). */
static char *nest(int level, int last, int pretty, char *w)
{
	int in = 2 * (level + 1), k;

	json_begin_object(&j);
	json_key(&j, "k");
	json_null(&j);
	json_key(&j, "a_key_of_twenty_bytes");
	json_begin_array(&j);
	for (k = 0; k < 2; k++)
		json_bool(&j, k);
	json_end_array(&j);
	if (pretty)
		w += sprintf(w, "{\n%*s\"k\": null,\n%*s\"a_key_of_twenty_bytes\""
			     ": [\n%*sfalse,\n%*strue\n%*s]", in, "", in, "",
			     in + 2, "", in + 2, "", in, "");
	else
		w += sprintf(w, "{\"k\":null,\"a_key_of_twenty_bytes\":"
			     "[false,true]");
	if (level < last) {
		json_key(&j, "n");
		w += pretty ? sprintf(w, ",\n%*s\"n\": ", in, "")
			    : sprintf(w, ",\"n\":");
		w = nest(level + 1, last, pretty, w);
	}
	json_end_object(&j);
	w += pretty ? sprintf(w, "\n%*s}", in - 2, "") : sprintf(w, "}");
	return w;
}

static void every_depth(void)
{
	int pretty;

	for (pretty = 0; pretty <= 1; pretty++) {
		char *buf, *want;
		size_t len;
		FILE *f = start(&buf, &len, pretty);

		want = malloc(1 << 16);
		if (!want)
			abort();
		/* The deepest the writer allows: the last level's array at
		 * JSON_MAX_DEPTH - 1. */
		memcpy(nest(0, JSON_MAX_DEPTH - 3, pretty, want), "\n", 2);
		fclose(f);
		CHECK(strcmp(buf, want) == 0, "%s at every depth: got %s",
		      pretty ? "pretty" : "compact", buf);
		free(buf);
		free(want);
	}
}

/* Keys, addresses and integers wherever the buffer fills: strings of
 * every length up to 60 before them move where each of some eighty
 * flushes falls; the document must be what printf makes. */
static void values_across_flushes(void)
{
	size_t n = 30000, cap = n * 256, i, k = 0;
	char *buf, *want = malloc(cap), fill[64];
	size_t len;
	FILE *f = start(&buf, &len, 0);

	if (!want)
		abort();
	json_begin_array(&j);
	k += (size_t)snprintf(want + k, cap - k, "[");
	for (i = 0; i < n; i++) {
		uint64_t v = (i * 0x9e3779b97f4a7c15u) >> (i % 64);
		size_t m = i % 61;

		memset(fill, 'a' + (int)(i % 26), m);
		fill[m] = 0;
		json_begin_object(&j);
		json_key(&j, "s");
		json_string(&j, fill);
		json_key(&j, "h");
		json_hex(&j, v);
		json_key(&j, "i");
		json_int(&j, -(long long)(v >> 1));
		json_key(&j, "u");
		json_uint(&j, v);
		json_end_object(&j);
		/* and as elements, after no key (and after a string, whose
		 * test for room asks less) */
		json_string(&j, fill);
		json_int(&j, (long long)i - 7);
		json_string(&j, fill);
		json_hex(&j, v);
		k += (size_t)snprintf(want + k, cap - k,
				      "%s{\"s\":\"%s\",\"h\":\"0x%llx\",\"i\":%lld,"
				      "\"u\":%llu},\"%s\",%lld,\"%s\",\"0x%llx\"",
				      i ? "," : "", fill,
				      (unsigned long long)v,
				      -(long long)(v >> 1),
				      (unsigned long long)v, fill, (long long)i - 7,
				      fill, (unsigned long long)v);
	}
	json_end_array(&j);
	snprintf(want + k, cap - k, "]\n");
	fclose(f);
	CHECK(strcmp(buf, want) == 0, "values across flushes: %zu and %zu "
	      "bytes", strlen(buf), strlen(want));
	CHECK(strlen(buf) > 40 * (size_t)JSON_BUF, "%zu bytes: too few flushes",
	      strlen(buf));
	free(buf);
	free(want);
}

/* Members written by json_key_int(), json_key_addr() and
 * json_key_string() (combined), or by json_key() and the value's own
 * call: strings of every length to 40 (plain, to be escaped, NULL),
 * integers of both signs, addresses and 0, at two depths and across
 * the buffer's flushes. */
static char *members(int pretty, int combined)
{
	char *buf, str[48];
	size_t len, i;
	FILE *f = start(&buf, &len, pretty);

	json_begin_array(&j);
	for (i = 0; i < 20000; i++) {
		uint64_t v = (i * 0x9e3779b97f4a7c15u) >> (i % 64);
		size_t m = i % 41;
		long long x = (long long)(v >> 1) * (i % 2 ? -1 : 1);
		uint64_t a = i % 7 ? v : 0;  /* an address, or none */
		const char *s = i % 97 == 3 ? NULL : str;

		memset(str, 'a' + (int)(i % 26), m);
		str[m] = 0;
		if (m && i % 5 == 1)
			str[i % m] = "\"\\\n\x7f\x01"[i % 5];
		json_begin_object(&j);
		if (i % 3 == 0) {
			json_key(&j, "deeper");
			json_begin_object(&j);
		}
		if (combined) {
			json_key_string(&j, "s", s);
			json_key_int(&j, "i", x);
			json_key_addr(&j, "a_key_longer_than_sixteen", a);
		} else {
			json_key(&j, "s");
			json_string(&j, s);
			json_key(&j, "i");
			json_int(&j, x);
			json_key(&j, "a_key_longer_than_sixteen");
			if (a)
				json_hex(&j, a);
			else
				json_null(&j);
		}
		if (i % 3 == 0)
			json_end_object(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	fclose(f);
	return buf;
}

static void key_and_value_calls(void)
{
	int pretty;

	for (pretty = 0; pretty <= 1; pretty++) {
		char *one = members(pretty, 1), *two = members(pretty, 0);

		CHECK(strcmp(one, two) == 0, "%s: a key and its value in one "
		      "call differ from two calls (%zu and %zu bytes)",
		      pretty ? "pretty" : "compact", strlen(one), strlen(two));
		CHECK(strlen(one) > 8 * (size_t)JSON_BUF, "%zu bytes: too few "
		      "flushes", strlen(one));
		free(one);
		free(two);
	}
}

int main(void)
{
	/* Before anything counts them (cs_cpus() keeps its count). */
	setenv("COROSCOPE_TEST_CPUS", "2", 1);
	parts_kept();
	parts();
	three_parts();
	pretty_layout();
	values_across_flushes();
	key_and_value_calls();
	every_depth();
	decimal_values();
	background_writer();
	literal_keys_and_hex();
	hex_values();
	every_byte_everywhere();
	utf8_sequences();
	long_string();
	return CHECK_DONE("test_json");
}
