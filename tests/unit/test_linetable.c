/*
 * Line table decoders against the interpreters' own answers.
 *
 * The fixtures (tests/unit/fixtures/linetable/<version>.txt, written by
 * tools/gen-linetable-fixtures.py under each installed CPython) hold real
 * tables and the line PyCode_Addr2Line() gave at every offset; see the
 * generator for the format.  Then hand-made and random garbage, which must
 * give -1 or a line, never a crash: run under -fsanitize=address so a read
 * past the table is caught (every table is copied to an exact-size heap
 * buffer first).
 *
 * usage: test_linetable [FIXTURE_DIR]   (default: from the repo root)
 */
#include "readers/linetable.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"
#include "common/banned.h"

#define DEFAULT_DIR "tests/unit/fixtures/linetable"

/* A copy of the bytes in a buffer of exactly `len` bytes, so ASan flags
 * any read past the end; NULL for an empty table. */
static uint8_t *exact_copy(const uint8_t *bytes, size_t len)
{
	uint8_t *p;

	if (!len)
		return NULL;
	p = malloc(len);
	if (!p) {
		perror("malloc");
		exit(2);
	}
	memcpy(p, bytes, len);
	return p;
}

static int line_at(enum py_linetable_kind kind, const uint8_t *bytes,
		   size_t len, int first, long offset)
{
	uint8_t *copy = exact_copy(bytes, len);
	int line = linetable_line_at(kind, copy, len, first, offset);

	free(copy);
	return line;
}

/* -- fixtures ------------------------------------------------------------ */

struct fixture_code {
	char name[128];
	int first;
	long codelen;
	uint8_t *table;
	size_t len;
};

static int parse_kind(const char *s, enum py_linetable_kind *kind)
{
	if (!strcmp(s, "lnotab"))
		*kind = PY_LNOTAB;
	else if (!strcmp(s, "linetable310"))
		*kind = PY_LINETABLE_310;
	else if (!strcmp(s, "locations311"))
		*kind = PY_LOCATIONS_311;
	else
		return -1;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode hex into a fresh exact-size buffer; "-" is the empty table. */
static int parse_hex(const char *hex, uint8_t **out, size_t *len)
{
	size_t n = strlen(hex), i;
	uint8_t *buf;

	*out = NULL;
	*len = 0;
	if (!strcmp(hex, "-"))
		return 0;
	if (n % 2)
		return -1;
	buf = malloc(n / 2);
	if (!buf)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(buf);
			return -1;
		}
		buf[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = buf;
	*len = n / 2;
	return 0;
}

/* The iterator must agree with the oracle's shape: ranges contiguous from
 * 0, and for 3.10+ ending exactly where the bytecode ends. */
static void check_ranges(const char *file, enum py_linetable_kind kind,
			 const struct fixture_code *c)
{
	struct linetable_iter it;
	struct linetable_range r;
	int64_t expect_start = 0;
	size_t n = 0;

	linetable_iter_init(&it, kind, c->table, c->len, c->first);
	while (linetable_iter_next(&it, &r)) {
		CHECK(r.start == expect_start && r.end > r.start,
		      "%s %s: range %lld-%lld after %lld", file, c->name,
		      (long long)r.start, (long long)r.end,
		      (long long)expect_start);
		expect_start = r.end;
		if (++n > c->len + 1)
			break;
	}
	CHECK(!it.malformed, "%s %s: real table reported malformed", file,
	      c->name);
	if (kind == PY_LNOTAB)
		CHECK(expect_start == INT64_MAX,
		      "%s %s: lnotab walk not open-ended", file, c->name);
	else
		CHECK(expect_start == c->codelen,
		      "%s %s: ranges end at %lld, code is %ld bytes", file,
		      c->name, (long long)expect_start, c->codelen);
}

static void expect_line(const char *file, int lineno, enum py_linetable_kind kind,
			const struct fixture_code *c, long offset, int want)
{
	int got = linetable_line_at(kind, c->table, c->len, c->first, offset);

	CHECK(got == want, "%s:%d %s offset %ld: got %d, want %d", file,
	      lineno, c->name, offset, got, want);
}

/* Returns the number of code objects checked, or -1 on a parse error. */
static int run_fixture(const char *dir, const char *file)
{
	char path[4096], version[64] = "", kindname[64];
	char *buf = NULL;
	size_t cap = 0;
	FILE *fp;
	int lineno = 0, ncode = 0, have_kind = 0, have_code = 0;
	enum py_linetable_kind kind = PY_LNOTAB;
	struct fixture_code c;

	memset(&c, 0, sizeof(c));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fp = fopen(path, "r");
	if (!fp) {
		printf("cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&buf, &cap, fp) > 0) {
		char hex[8], *table_hex = NULL;
		long a, b;
		int line;

		lineno++;
		buf[strcspn(buf, "\n")] = '\0';
		if (sscanf(buf, "python %63s %63s", version, kindname) == 2) {
			if (parse_kind(kindname, &kind) < 0)
				goto bad;
			have_kind = 1;
		} else if (!strncmp(buf, "code ", 5) && have_kind) {
			free(c.table);
			memset(&c, 0, sizeof(c));
			table_hex = malloc(strlen(buf) + 1);
			if (!table_hex ||
			    sscanf(buf, "code %127s %d %ld %s", c.name, &c.first,
				   &c.codelen, table_hex) != 4 ||
			    parse_hex(table_hex, &c.table, &c.len) < 0) {
				free(table_hex);
				goto bad;
			}
			free(table_hex);
			check_ranges(file, kind, &c);
			have_code = 1;
			ncode++;
		} else if (sscanf(buf, "range %ld %ld %d", &a, &b, &line) == 3 &&
			   have_code) {
			long off;

			if (a < 0 || b > c.codelen || a > b)
				goto bad;
			for (off = a; off < b; off += 2)
				expect_line(file, lineno, kind, &c, off, line);
		} else if ((sscanf(buf, "probe %ld %d", &a, &line) == 2 ||
			    sscanf(buf, "frame %ld %d", &a, &line) == 2) &&
			   have_code) {
			expect_line(file, lineno, kind, &c, a, line);
		} else if (sscanf(buf, "%7s", hex) == 1) {
			goto bad;
		}
	}
	free(c.table);
	free(buf);
	fclose(fp);
	printf("%s: python %s, %d code objects\n", file, version, ncode);
	return ncode;
bad:
	printf("%s:%d: cannot parse '%.60s'\n", file, lineno, buf);
	free(c.table);
	free(buf);
	fclose(fp);
	return -1;
}

static int is_fixture(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".txt");
}

static void run_fixtures(const char *dir)
{
	struct dirent **names;
	int n, i, files = 0;

	n = scandir(dir, &names, is_fixture, alphasort);
	if (n < 0) {
		CHECK(0, "cannot read fixture directory '%s': %s", dir,
		      strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		int ncode = run_fixture(dir, names[i]->d_name);

		CHECK(ncode > 0, "fixture '%s' unreadable or empty",
		      names[i]->d_name);
		files += ncode > 0;
		free(names[i]);
	}
	free(names);
	CHECK(files > 0, "no fixtures in '%s'", dir);
}

/* -- hand-made tables ---------------------------------------------------- */

#define LINE(kind, first, off, ...) \
	line_at(kind, (const uint8_t[]){ __VA_ARGS__ }, \
		sizeof((const uint8_t[]){ __VA_ARGS__ }), first, off)

static void test_empty(void)
{
	static const enum py_linetable_kind kinds[] = {
		PY_LNOTAB, PY_LINETABLE_310, PY_LOCATIONS_311,
	};
	static const uint8_t one = 0x80;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		enum py_linetable_kind k = kinds[i];
		/* lnotab keeps the first line forever, the others know where
		 * the bytecode ends: nowhere. */
		int want = k == PY_LNOTAB ? 7 : -1;

		CHECK(linetable_line_at(k, NULL, 0, 7, 0) == want,
		      "kind %d: empty table, offset 0", k);
		CHECK(linetable_line_at(k, NULL, 0, 7, LONG_MAX) == want,
		      "kind %d: empty table, LONG_MAX", k);
		CHECK(linetable_line_at(k, NULL, 0, 7, -2) == 7,
		      "kind %d: empty table, offset -2", k);
		CHECK(linetable_line_at(k, NULL, 0, 7, LONG_MIN) == 7,
		      "kind %d: empty table, LONG_MIN", k);
		CHECK(linetable_line_at(k, NULL, 0, -3, -2) == -1,
		      "kind %d: negative firstlineno", k);
		/* A NULL table with a length is treated as empty. */
		CHECK(linetable_line_at(k, NULL, 100, 7, 0) == want,
		      "kind %d: NULL table, nonzero len", k);
		/* len 0 must not look at the byte */
		CHECK(linetable_line_at(k, &one, 0, 7, 0) == want,
		      "kind %d: len 0 with a buffer", k);
	}
	CHECK(linetable_line_at((enum py_linetable_kind)7, &one, 1, 7, 0) == -1,
	      "unknown kind");
	CHECK(linetable_line_at((enum py_linetable_kind)-1, &one, 1, 7, -2) == 7,
	      "unknown kind, negative offset");
}

static void test_lnotab(void)
{
	/* 4 bytes at line 10, then +2 for 6 bytes, then -1 */
	CHECK(LINE(PY_LNOTAB, 10, 0, 4, 2, 6, 0xff) == 10, "lnotab start");
	CHECK(LINE(PY_LNOTAB, 10, 3, 4, 2, 6, 0xff) == 10, "lnotab 3");
	CHECK(LINE(PY_LNOTAB, 10, 4, 4, 2, 6, 0xff) == 12, "lnotab 4");
	CHECK(LINE(PY_LNOTAB, 10, 9, 4, 2, 6, 0xff) == 12, "lnotab 9");
	CHECK(LINE(PY_LNOTAB, 10, 10, 4, 2, 6, 0xff) == 11, "lnotab 10");
	CHECK(LINE(PY_LNOTAB, 10, LONG_MAX, 4, 2, 6, 0xff) == 11,
	      "lnotab LONG_MAX");
	/* a line jump split over zero-address pairs */
	CHECK(LINE(PY_LNOTAB, 1, 2, 2, 127, 0, 127, 0, 6) == 261,
	      "lnotab split jump");
	/* a trailing odd byte is ignored */
	CHECK(LINE(PY_LNOTAB, 5, 100, 2, 1, 9) == 6, "lnotab odd length");
	/* line overflow: the first range stands, the rest is unknown */
	CHECK(LINE(PY_LNOTAB, INT_MAX - 1, 0, 2, 127, 2, 0) == INT_MAX - 1,
	      "lnotab before overflow");
	CHECK(LINE(PY_LNOTAB, INT_MAX - 1, 2, 2, 127, 2, 0) == -1,
	      "lnotab after overflow");
	CHECK(LINE(PY_LNOTAB, INT_MIN + 1, 2, 2, 0x80) == -1,
	      "lnotab underflow");
	/* a line driven below zero is no line */
	CHECK(LINE(PY_LNOTAB, 1, 4, 2, 0xfb) == -1, "lnotab negative line");
}

static void test_310(void)
{
	/* no line for 2 bytes, then 4 bytes at +1, then 2 bytes at +3 */
	CHECK(LINE(PY_LINETABLE_310, 20, 0, 2, 0x80, 4, 1, 2, 2) == -1,
	      "310 no line");
	CHECK(LINE(PY_LINETABLE_310, 20, 2, 2, 0x80, 4, 1, 2, 2) == 21,
	      "310 line after no-line");
	CHECK(LINE(PY_LINETABLE_310, 20, 6, 2, 0x80, 4, 1, 2, 2) == 23,
	      "310 third range");
	CHECK(LINE(PY_LINETABLE_310, 20, 8, 2, 0x80, 4, 1, 2, 2) == -1,
	      "310 past the end");
	/* zero-length entries carry line deltas */
	CHECK(LINE(PY_LINETABLE_310, 1, 0, 0, 127, 0, 127, 2, 1) == 256,
	      "310 zero-length entries");
	/* odd length: the last byte is no entry */
	CHECK(LINE(PY_LINETABLE_310, 5, 0, 4, 1, 7) == 6, "310 odd length");
	CHECK(LINE(PY_LINETABLE_310, 5, 4, 4, 1, 7) == -1,
	      "310 odd length past");
	CHECK(LINE(PY_LINETABLE_310, 5, LONG_MAX, 4, 1) == -1,
	      "310 LONG_MAX");
	CHECK(LINE(PY_LINETABLE_310, INT_MAX, 0, 4, 1) == -1,
	      "310 overflow");
}

static void test_311(void)
{
	/* short form (code 0), 1 unit: same line */
	CHECK(LINE(PY_LOCATIONS_311, 3, 0, 0x80, 0x00) == 3, "311 short");
	CHECK(LINE(PY_LOCATIONS_311, 3, 1, 0x80, 0x00) == 3, "311 odd");
	CHECK(LINE(PY_LOCATIONS_311, 3, 2, 0x80, 0x00) == -1, "311 past");
	/* one-line form code 12 (+2), 3 units */
	CHECK(LINE(PY_LOCATIONS_311, 3, 4, 0xe2, 4, 9) == 5, "311 one-line");
	/* no-columns (13) with delta -3 (zigzag 7), then no location (15) */
	CHECK(LINE(PY_LOCATIONS_311, 10, 0, 0xe8, 7, 0xf8) == 7,
	      "311 no-columns negative");
	CHECK(LINE(PY_LOCATIONS_311, 10, 2, 0xe8, 7, 0xf8) == -1,
	      "311 no location");
	/* long form (14): delta +100 (zigzag 200 = 0x48 | 0x40, 3), end-line,
	 * columns; then a short entry on the same line */
	CHECK(LINE(PY_LOCATIONS_311, 1, 2, 0xf0, 0x48, 0x03, 0, 1, 2, 0x80, 0)
	      == 101, "311 long-form varint");
	/* varint truncated by the end of the table */
	CHECK(LINE(PY_LOCATIONS_311, 1, 0, 0xe8, 0x41) == -1,
	      "311 truncated varint");
	CHECK(LINE(PY_LOCATIONS_311, 1, 0, 0xe8) == -1,
	      "311 missing varint");
	/* an absurdly long varint: the line leaves the int range */
	CHECK(LINE(PY_LOCATIONS_311, 1, 0, 0xe8, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f,
		   0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f) == -1,
	      "311 huge varint");
	/* a first byte without bit 7: decoded like CPython, no crash */
	CHECK(LINE(PY_LOCATIONS_311, 1, 0, 0x50, 0x80, 0) == 1,
	      "311 headless first byte");
	/* code 15 without bit 7 is not the no-location marker */
	CHECK(LINE(PY_LOCATIONS_311, 4, 0, 0x78) == 4,
	      "311 code 15 without bit 7");
	CHECK(LINE(PY_LOCATIONS_311, 1, LONG_MAX, 0x87, 0) == -1,
	      "311 LONG_MAX");
	CHECK(LINE(PY_LOCATIONS_311, 1, -2, 0x87, 0) == 1, "311 -2");
}

/* Random tables: any answer is -1 or a line, and the iterator's ranges
 * are contiguous and as many as the table allows. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static void test_random(void)
{
	int round, bad = 0;

	for (round = 0; round < 20000; round++) {
		enum py_linetable_kind kind = (enum py_linetable_kind)(rnd() % 3);
		size_t len = rnd() % 40, i, n = 0;
		uint8_t *t = malloc(len ? len : 1);
		int first = (int)(rnd() % 100000);
		struct linetable_iter it;
		struct linetable_range r;
		int64_t expect_start = 0;
		long off;

		if (!t)
			exit(2);
		/* sometimes near the ends of the int range */
		if (round % 5 == 1)
			first = INT_MAX - first % 300;
		else if (round % 5 == 2)
			first = INT_MIN + first % 300;
		for (i = 0; i < len; i++)
			t[i] = (uint8_t)rnd();
		for (i = 0; i < 8; i++) {
			int line;

			off = (long)(rnd() % 1200) - 100;
			if (i == 7)
				off = LONG_MAX;
			line = linetable_line_at(kind, len ? t : NULL, len,
						 first, off);
			bad += line < -1;
		}
		linetable_iter_init(&it, kind, len ? t : NULL, len, first);
		while (linetable_iter_next(&it, &r)) {
			bad += r.start != expect_start || r.end <= r.start ||
			       r.line < -1;
			expect_start = r.end;
			if (++n > len + 1) {
				bad++;
				break;
			}
		}
		free(t);
	}
	CHECK(bad == 0, "random tables: %d bad answers", bad);
}

int main(int argc, char **argv)
{
	run_fixtures(argc > 1 ? argv[1] : DEFAULT_DIR);
	test_empty();
	test_lnotab();
	test_310();
	test_311();
	test_random();
	return CHECK_DONE("test_linetable");
}
