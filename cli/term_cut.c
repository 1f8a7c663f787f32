#include "cli/term_cut.h"

#include <langinfo.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "cli/escape.h"
#include "common/banned.h"

int term_locale_utf8(void)
{
	const char *cs;

	if (!setlocale(LC_CTYPE, ""))
		return 0;
	cs = nl_langinfo(CODESET);
	return cs && !strcmp(cs, "UTF-8");
}

/* The next unit of s (left bytes before its NUL): its bytes (*len, at
 * s) or, when *esc gets one, an escape of them; its width in columns. */
static size_t next_unit(const unsigned char *s, size_t left, int utf8,
			size_t *len, char *esc, size_t escsize)
{
	uint32_t cp;
	int w;

	esc[0] = '\0';
	*len = 1;
	if (s[0] < 0x80)
		return 1;
	if (utf8 && (*len = esc_utf8_decode(s, left, &cp)) > 0) {
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
	const unsigned char *p = (const unsigned char *)s,
			    *end = p + strlen(s);
	size_t used = 0, len, w;
	char esc[16];

	/* Bounded by the string: every unit takes a byte or more. */
	while (p < end) {
		w = next_unit(p, (size_t)(end - p), utf8, &len, esc,
			      sizeof(esc));
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
