/*
 * Memos of the JSON writer (cli/json_memo.c): a document made with runs
 * copied from a memo must be byte for byte the one made by writing every
 * run, pretty and compact, into a stream and through a writer thread, at
 * every depth and after a key, a member or nothing; runs cut by a flush
 * (some about a buffer long), runs too long to keep and more keys than a
 * memo keeps included; runs with holes (json_memo_write_holes()) as
 * their pieces and values written in turn.  And
 * the memo must actually copy: the runs are made far fewer times than
 * written.
 */
#include "cli/json_memo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/digest_stream.h"
#include "tests/unit/check.h"

static struct json j;
static long made;   /* runs made by run_fn */

struct run {
	unsigned id;
	size_t pad;     /* bytes of filler in its string */
};

/* A run whose bytes depend only on r (what a key must name). */
static void run_fn(struct json *jj, const void *arg)
{
	const struct run *r = arg;
	char *s = malloc(r->pad + 32);

	if (!s)
		abort();
	made++;
	memset(s, 'a' + (char)(r->id % 26), r->pad);
	snprintf(s + r->pad, 32, "-%u\"\\\n", r->id);
	json_key(jj, "name");
	json_string(jj, s);
	json_key(jj, "id");
	json_uint(jj, r->id);
	json_key(jj, "next");
	free(s);
}

/* One run: through the memo, or written. */
static void one(struct json_memo *m, const struct run *r)
{
	/* First words that share a memo's "recent" slot, in turn, as
	 * well as whole keys that do. */
	uint64_t key[JSON_MEMO_KEY] = { 3 + JSON_MEMO_RECENT * (r->id % 3),
					r->id, r->pad };

	if (m)
		json_memo_write(&j, m, key, run_fn, r);
	else
		run_fn(&j, r);
}

/* A run with holes: an object of an address, run_fn's members and a
 * number, whose bytes but the holes' depend only on r. */
static void holes_fn(struct json *jj, const void *arg, size_t i)
{
	switch (i) {
	case 0:
		json_begin_object(jj);
		json_key(jj, "addr");
		break;
	case 1:
		run_fn(jj, arg);  /* ends with a key */
		break;
	case 2:
		json_key(jj, "n");
		break;
	default:
		json_end_object(jj);
		break;
	}
}

/* One run with holes whose values depend on i (addresses and 0,
 * numbers of both signs): through the memo, or written as values. */
static void one_holes(struct json_memo *m, const struct run *r, size_t i)
{
	uint64_t key[JSON_MEMO_KEY] = { 2 + JSON_MEMO_RECENT * (r->id % 3),
					r->id, r->pad };
	const struct json_hole h[3] = {
		{ JSON_HOLE_ADDR, i % 5 ? i * 0x10001 : 0, 0 },
		{ JSON_HOLE_NUM, 0, (long long)(i % 7) - 2 },
		{ JSON_HOLE_INT, 0, ((long long)i - 500) * 977 },
	};

	if (m) {
		json_memo_write_holes(&j, m, key, holes_fn, r, h, 3);
		return;
	}
	holes_fn(&j, r, 0);
	if (h[0].addr)
		json_hex(&j, h[0].addr);
	else
		json_null(&j);
	holes_fn(&j, r, 1);
	if (h[1].num >= 0)
		json_int(&j, h[1].num);
	else
		json_null(&j);
	holes_fn(&j, r, 2);
	json_int(&j, h[2].num);
	holes_fn(&j, r, 3);
}

/*
 * The document: n objects, each at one of four depths, each holding the
 * run once after nothing, once after a member, and once as the whole of
 * a key's value's object, and twice in a run with holes;
 * `spread` different runs in turn.
 */
static void document(struct json_memo *m, size_t n, unsigned spread,
		     size_t pad)
{
	size_t i, d;

	json_begin_array(&j);
	for (i = 0; i < n; i++) {
		struct run r = { (unsigned)(i % spread), pad + i % 3 };
		size_t depth = i % 4;

		for (d = 0; d < depth; d++)
			json_begin_array(&j);
		json_begin_object(&j);
		one(m, &r);
		json_int(&j, (long long)i);
		json_key(&j, "inner");
		json_begin_object(&j);
		one(m, &r);
		json_null(&j);
		json_end_object(&j);
		json_key(&j, "x");
		json_bool(&j, 1);
		one(m, &r);
		json_hex(&j, i);
		/* two runs with holes, after nothing and after one */
		json_key(&j, "holes");
		json_begin_array(&j);
		one_holes(m, &r, i);
		one_holes(m, &r, i + 1);
		json_end_array(&j);
		json_end_object(&j);
		for (d = 0; d < depth; d++)
			json_end_array(&j);
	}
	json_end_array(&j);
}

static void made_doc(int memo, int pretty, int background, size_t n,
		     unsigned spread, size_t pad, struct digest *d)
{
	struct json_memo m;
	FILE *f = digest_open(d);

	if (!f)
		abort();
	json_memo_init(&m);
	json_init(&j, f, pretty);
	if (background)
		json_background(&j);
	document(memo ? &m : NULL, n, spread, pad);
	json_memo_release(&m);
	fclose(f);
}

static void same(int pretty, int background, size_t n, unsigned spread,
		 size_t pad)
{
	struct digest a, b;
	long without;

	made = 0;
	made_doc(0, pretty, background, n, spread, pad, &a);
	without = made;
	made = 0;
	made_doc(1, pretty, background, n, spread, pad, &b);
	CHECK(digest_equal(&a, &b),
	      "pretty %d, writer %d, %zu objects, %u runs, pad %zu: the "
	      "documents differ (%zu and %zu bytes)",
	      pretty, background, n, spread, pad, a.len, b.len);
	CHECK(without == (long)n * 5, "every run written: %ld", without);
	/* A kept run is never made again; the ones cut by a flush, too long
	 * or past the bounds are. */
	if (n >= 3000 && pad < 4096 && spread <= 100)
		CHECK(made < without / 4,
		      "pretty %d, %u runs: made %ld times of %ld", pretty,
		      spread, made, without);
}

int main(void)
{
	int pretty, bg;

	for (pretty = 0; pretty <= 1; pretty++) {
		for (bg = 0; bg <= 1; bg++) {
			same(pretty, bg, 1, 1, 0);
			same(pretty, bg, 50, 7, 10);
			/* Many flushes, runs cut by them. */
			same(pretty, bg, 20000, 13, 40);
			same(pretty, bg, 3000, 100, 900);
			/* Runs longer than a memo keeps. */
			same(pretty, bg, 200, 5, 5000);
			/* Runs about a buffer long (64 KiB): a flush in the
			 * middle leaves the buffer holding fewer bytes of it
			 * than a memo keeps, past where it began; they must
			 * not be taken for the run.  Objects 0 and 12 make
			 * the same run in the same place. */
			same(pretty, bg, 13, 1, 65536 - 40);
			same(pretty, bg, 13, 1, 65536);
			same(pretty, bg, 13, 1, 65536 + 100);
		}
		/* More keys than a memo keeps (65,536 runs). */
		same(pretty, 0, 80000, 80000, 0);
	}
	return CHECK_DONE("test_json_memo");
}
