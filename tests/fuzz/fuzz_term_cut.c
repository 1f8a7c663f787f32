/*
 * libFuzzer harness for the escaper (cli/escape.c) and the live view's
 * cut to a screen's width (cli/term_cut.c): a target's string, escaped as
 * every report escapes it, then cut as the live view cuts it.
 *
 * Input: byte 0 the screen's columns (0-255), byte 1 bit 0 a UTF-8
 * locale or not, the rest the string (up to its first NUL, as a name
 * read from a target ends).  Seeds: tests/fuzz/corpus/term_cut/.
 *
 * Besides the sanitizers, it aborts when an answer breaks the contract:
 * an escaped string holding a control character or invalid UTF-8, a cut
 * wider than the screen, not the start of the whole line, or not all of
 * it where it fits, a cut that is no longer clean UTF-8, or one holding a
 * byte outside ASCII where the locale is not UTF-8; and where esc_cut()
 * cuts a string of as many bytes: past them, more than a character short
 * of them, or inside a character.
 */
#include "cli/escape.h"
#include "cli/term_cut.h"

#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Valid UTF-8 with no C0, DEL or C1 control character? */
static int clean_utf8(const unsigned char *s)
{
	while (*s) {
		size_t n, k;
		uint32_t c;

		if (*s < 0x80) {
			if (*s < 0x20 || *s == 0x7f)
				return 0;
			s++;
			continue;
		}
		if (*s < 0xc2 || *s > 0xf4)
			return 0;
		n = *s < 0xe0 ? 2 : *s < 0xf0 ? 3 : 4;
		c = *s & (0x7f >> n);
		for (k = 1; k < n; k++) {
			if ((s[k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (s[k] & 0x3f);
		}
		if (c < 0xa0 || (n == 3 && c < 0x800) ||
		    (n == 4 && c < 0x10000) || c > 0x10ffff ||
		    (c >= 0xd800 && c <= 0xdfff))
			return 0;
		s += n;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int locale_set;
	struct strbuf esc, whole, cut;
	size_t cols, used, wide, i, n;
	char *s;
	int utf8;

	if (size < 2)
		return 0;
	if (!locale_set) {
		if (!setlocale(LC_CTYPE, "C.UTF-8"))
			abort();   /* the UTF-8 cases would test nothing */
		locale_set = 1;
	}
	cols = data[0];
	utf8 = data[1] & 1;
	s = malloc(size - 1);
	if (!s)
		return 0;
	memcpy(s, data + 2, size - 2);
	s[size - 2] = '\0';
	strbuf_init(&esc);
	strbuf_init(&whole);
	strbuf_init(&cut);
	esc_add(&esc, s, ESC_TEXT, 0);
	if (!clean_utf8((const unsigned char *)esc.buf))
		abort();
	wide = term_cut(&whole, esc.buf, SIZE_MAX, utf8);
	used = term_cut(&cut, esc.buf, cols, utf8);
	if (used > cols || used > wide || cut.len > whole.len ||
	    memcmp(cut.buf, whole.buf, cut.len) ||
	    (wide <= cols && (used != wide || cut.len != whole.len)))
		abort();
	if (!clean_utf8((const unsigned char *)cut.buf))
		abort();
	for (i = 0; !utf8 && i < cut.len; i++)
		if ((unsigned char)cut.buf[i] >= 0x80)
			abort();
	/* A cut at cols bytes (the reports' esc_cut()): within them, at
	 * most a character short of them, and never splitting one of a
	 * string that has no invalid bytes. */
	n = esc_cut(s, cols);
	if (cols && strlen(s) > cols && (n > cols || n + 3 < cols))
		abort();
	if (n <= strlen(s) && clean_utf8((const unsigned char *)s)) {
		char keep = s[n];

		s[n] = '\0';
		if (!clean_utf8((const unsigned char *)s))
			abort();
		s[n] = keep;
	}
	/* The raw string too (not what the view gets): only the sanitizers
	 * judge it. */
	strbuf_reset(&cut);
	(void)term_cut(&cut, s, cols, utf8);
	strbuf_release(&esc);
	strbuf_release(&whole);
	strbuf_release(&cut);
	free(s);
	return 0;
}
