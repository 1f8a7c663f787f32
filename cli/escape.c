#include "cli/escape.h"

#include <stdint.h>
#include <string.h>

#include "common/banned.h"

/* Punctuation Markdown would take for markup ('&': an entity, which
 * could spell any character; '~': strike-through; '$': GitHub's
 * math; ':' and '.': GitHub's autolinks, which a backslash before the
 * ':' of "http://" or the '.' of "www." keeps as text; an address
 * "a@b.c" is linked as mailto: whatever is escaped). */
#define MD_SPECIAL "\\`*_[]<>|#&~$:."

size_t esc_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t v, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, v = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, v = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, v = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

size_t esc_kept_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (n >= 2 && s[0] == 0xC0 && s[1] == 0x80) {
		*cp = 0;
		return 2;
	}
	if (n >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF &&
	    (s[2] & 0xC0) == 0x80) {
		*cp = 0xD000 | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
		return 3;
	}
	return 0;
}

/* Characters that move text around or break lines without being
 * control characters. */
static int is_format_char(uint32_t cp)
{
	return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f || cp == 0x061c ||
	       cp == 0x2028 || cp == 0x2029;
}

/* The backslash of an escape: inside a DOT string, where Graphviz reads
 * "\n" as a line break, it is itself backslashed. */
static void add_backslash(struct strbuf *sb, enum esc_mode mode)
{
	strbuf_addstr(sb, mode == ESC_DOT ? "\\\\" : "\\");
}

static void add_hex(struct strbuf *sb, unsigned char b, enum esc_mode mode)
{
	add_backslash(sb, mode);
	strbuf_addf(sb, "x%02x", b);
}

static void add_control(struct strbuf *sb, unsigned char b, enum esc_mode mode)
{
	const char *named = b == '\n' ? "n" : b == '\r' ? "r" :
			    b == '\t' ? "t" : NULL;

	if (!named) {
		add_hex(sb, b, mode);
		return;
	}
	add_backslash(sb, mode);
	strbuf_addstr(sb, named);
}

/* Backslashed in a name: what could end its quotes or fake an escape. */
static int name_special(unsigned char b)
{
	return b == '\\' || b == '\'' || b == '"';
}

static void add_ascii(struct strbuf *sb, unsigned char b, enum esc_mode mode)
{
	if ((mode == ESC_DOT && (b == '"' || b == '\\')) ||
	    (mode == ESC_NAME && name_special(b)))
		strbuf_addch(sb, '\\');
	else if (mode == ESC_MD && strchr(MD_SPECIAL, b))
		strbuf_addch(sb, '\\');
	strbuf_addch(sb, (char)b);
}

/* 1 when s (up to n bytes) passes through unchanged. */
static int is_plain(const char *s, size_t n, enum esc_mode mode)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];

		if (b < 0x20 || b >= 0x7f)
			return 0;
		if ((mode == ESC_DOT && (b == '"' || b == '\\')) ||
		    (mode == ESC_NAME && name_special(b)) ||
		    (mode == ESC_MD && strchr(MD_SPECIAL, b)))
			return 0;
	}
	return 1;
}

size_t esc_cut(const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), p, len;

	if (!max || n <= max)
		return n;
	/* The lead byte of a character the cut would split: its
	 * continuation bytes (at most 3) back from the cut. */
	for (p = max; p > 0 && max - p < 3 && (s[p] & 0xc0) == 0x80; p--)
		;
	len = s[p] >= 0xf0 ? 4 : s[p] >= 0xe0 ? 3 : s[p] >= 0xc0 ? 2 : 1;
	return p < max && p + len > max ? p : max;
}

void esc_add(struct strbuf *sb, const char *str, enum esc_mode mode,
	     size_t max)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "?");
	size_t n = esc_cut((const char *)s, max), i = 0, len, k;
	uint32_t cp;

	while (i < n) {
		unsigned char b = s[i];

		if (b < 0x20 || b == 0x7f) {
			add_control(sb, b, mode);
			i++;
		} else if (b < 0x80) {
			add_ascii(sb, b, mode);
			i++;
		} else if (!(len = esc_utf8_decode(s + i, n - i, &cp))) {
			if ((len = esc_kept_char(s + i, n - i, &cp)) != 0) {
				/* a NUL or lone surrogate of a name */
				add_backslash(sb, mode);
				if (cp)
					strbuf_addf(sb, "u%04x", (unsigned)cp);
				else
					strbuf_addstr(sb, "x00");
				i += len;
				continue;
			}
			add_hex(sb, b, mode);  /* not UTF-8: the byte itself */
			i++;
		} else if (cp <= 0x9f) {
			for (k = 0; k < len; k++)
				add_hex(sb, s[i + k], mode);  /* a C1 control */
			i += len;
		} else if (is_format_char(cp)) {
			add_backslash(sb, mode);
			strbuf_addf(sb, "u%04x", (unsigned)cp);
			i += len;
		} else {
			strbuf_add(sb, (const char *)s + i, len);
			i += len;
		}
	}
}

void esc_add_name_raw(struct strbuf *sb, const char *s)
{
	if (!s)
		s = "?";
	for (; *s; s++) {  /* bounded: the string's end */
		if (name_special((unsigned char)*s))
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s);
	}
}

void esc_put(FILE *out, const char *s, enum esc_mode mode, size_t max)
{
	struct strbuf sb;
	size_t n;

	if (!s)
		s = "?";
	n = esc_cut(s, max);
	/* The common case, and a report of 100,000 tasks is made of it. */
	if (is_plain(s, n, mode)) {
		fwrite(s, 1, n, out);
		return;
	}
	strbuf_init(&sb);
	esc_add(&sb, s, mode, max);
	fwrite(sb.buf, 1, sb.len, out);
	strbuf_release(&sb);
}

void esc_text(FILE *out, const char *s)
{
	esc_put(out, s, ESC_TEXT, 0);
}
