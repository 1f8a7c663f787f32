/*
 * The live view's lines cut to a screen's width (cli/term_cut.c): in
 * display columns in a UTF-8 locale (CJK characters two, combining
 * marks none), never inside a character or an escape; outside ASCII as
 * escapes where the locale is not UTF-8 or cannot show a character.
 */
#include "cli/term_cut.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

/* term_cut(s, cols, utf8) into a string; *used its columns. */
static char *cut(const char *s, size_t cols, int utf8, size_t *used)
{
	struct strbuf sb;

	strbuf_init(&sb);
	*used = term_cut(&sb, s, cols, utf8);
	return strbuf_detach(&sb);
}

static void expect(const char *s, size_t cols, int utf8, const char *want,
		   size_t want_used)
{
	size_t used;
	char *got = cut(s, cols, utf8, &used);

	CHECK(!strcmp(got, want) && used == want_used,
	      "cut('%s', %zu, %s): '%s' in %zu columns, want '%s' in %zu",
	      s, cols, utf8 ? "utf8" : "other", got, used, want, want_used);
	free(got);
}

#define CJK "\xe3\x82\xbf\xe3\x82\xb9\xe3\x82\xaf"   /* U+30BF U+30B9 U+30AF */

static void test_utf8(void)
{
	expect("abcdef", 4, 1, "abcd", 4);
	expect("abc", 10, 1, "abc", 3);
	expect("", 5, 1, "", 0);
	expect("abc", 0, 1, "", 0);
	/* two columns each: five columns hold two and a half, so two */
	expect(CJK, 5, 1, "\xe3\x82\xbf\xe3\x82\xb9", 4);
	expect(CJK, 6, 1, CJK, 6);
	expect("x" CJK, 2, 1, "x", 1);
	/* e and a combining acute: one column, never parted */
	expect("e\xcc\x81x", 1, 1, "e\xcc\x81", 1);
	/* two-byte letters: a column each */
	expect("\xc3\xbcn\xc3\xaf", 2, 1, "\xc3\xbcn", 2);
	/* unassigned U+0378 as an escape of six columns, whole or not at
	 * all; bytes that are not UTF-8 as \xNN */
	expect("a\xcd\xb8", 7, 1, "a\\u0378", 7);
	expect("a\xcd\xb8", 6, 1, "a", 1);
	expect("a\xff" "b", 9, 1, "a\\xffb", 6);
	expect("\xe3\x82", 9, 1, "\\xe3\\x82", 8);   /* cut short */
	expect("\xed\xa0\x80", 20, 1, "\\xed\\xa0\\x80", 12);  /* surrogate */
	expect("\xe0\x80\xaf", 20, 1, "\\xe0\\x80\\xaf", 12);  /* overlong */
}

static void test_other_locale(void)
{
	/* every byte outside ASCII an escape, never cut */
	expect("a\xc3\xbc", 20, 0, "a\\xc3\\xbc", 9);
	expect("a\xc3\xbc", 8, 0, "a\\xc3", 5);
	expect("a\xc3\xbc", 4, 0, "a", 1);
	expect(CJK, 12, 0, "\\xe3\\x82\\xbf", 12);
}

static void test_pad(void)
{
	struct strbuf sb;

	strbuf_init(&sb);
	term_pad(&sb, "t '" CJK "'", 12, 1);   /* 10 columns */
	strbuf_addch(&sb, '|');
	CHECK(!strcmp(sb.buf, "t '" CJK "'  |"), "padded by columns: '%s'",
	      sb.buf);
	strbuf_reset(&sb);
	term_pad(&sb, "longer than that", 4, 1);
	CHECK(!strcmp(sb.buf, "longer than that"), "not cut: '%s'", sb.buf);
	strbuf_release(&sb);
}

int main(void)
{
	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		printf("FAIL: no C.UTF-8 locale to test in\n");
		return 1;
	}
	test_utf8();
	test_other_locale();
	test_pad();
	return CHECK_DONE("test_term_cut");
}
