#include "cli/term_cut.h"

#include <langinfo.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "common/banned.h"

int term_locale_utf8(void)
{
	const char *cs;

	if (!setlocale(LC_CTYPE, ""))
		return 0;
	cs = nl_langinfo(CODESET);
	return cs && !strcmp(cs, "UTF-8");
}

/* The UTF-8 character at s: its length in bytes (0: not one, take the
 * byte alone) and code point. */
static size_t utf8_char(const unsigned char *s, uint32_t *cp)
{
	size_t n, k;
	uint32_t c;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	c = s[0] & (0x7f >> n);
	for (k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)   /* the NUL ends it too */
			return 0;
		c = c << 6 | (s[k] & 0x3f);
	}
	/* overlong three- and four-byte forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* The next unit of s: its bytes (*len, at s) or, when *esc gets one, an
 * escape of them; its width in columns. */
static size_t next_unit(const unsigned char *s, int utf8, size_t *len,
			char *esc, size_t escsize)
{
	uint32_t cp;
	int w;

	esc[0] = '\0';
	*len = 1;
	if (s[0] < 0x80)
		return 1;
	if (utf8 && (*len = utf8_char(s, &cp)) > 0) {
		w = wcwidth((wchar_t)cp);
		if (w >= 0)
			return (size_t)w;
		snprintf(esc, escsize, cp > 0xffff ? "\\U%08x" : "\\u%04x",
			 (unsigned)cp);
		return strlen(esc);
	}
	*len = 1;
	snprintf(esc, escsize, "\\x%02x", s[0]);
	return 4;
}

size_t term_cut(struct strbuf *out, const char *s, size_t cols, int utf8)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, len, w;
	char esc[16];

	/* Bounded by the string: every unit takes a byte or more. */
	while (*p) {
		w = next_unit(p, utf8, &len, esc, sizeof(esc));
		if (used + w > cols)
			break;
		if (esc[0])
			strbuf_addstr(out, esc);
		else
			strbuf_add(out, p, len);
		used += w;
		p += len;
	}
	return used;
}

void term_pad(struct strbuf *out, const char *s, size_t width, int utf8)
{
	size_t used = term_cut(out, s, SIZE_MAX, utf8);

	for (; used < width; used++)
		strbuf_addch(out, ' ');
}
