/*
 * The one escaper for every string read from the target (thread, task
 * and function names, file names, command lines, paths from a core...)
 * before it reaches a terminal, a log or a graph: a target must neither
 * forge lines of a report nor send control sequences to whoever reads it.
 *
 * Text: control characters (C0, DEL, and the C1 range U+0080-U+009F)
 * become \n, \r, \t or \xNN; bytes that are not valid UTF-8 become \xNN
 * each, but a str's NUL and lone surrogates as the readers keep them
 * (esc_kept_char()), which become \x00 and \udcNN; characters that
 * reorder or break lines (bidirectional overrides and isolates, U+2028,
 * U+2029) become \uNNNN; everything else, valid
 * non-ASCII UTF-8 included, is kept.  Backslashes are kept, so a
 * Python repr or a source line reads the same; names (ESC_NAME) have
 * them and their quotes backslashed.
 */
#ifndef COROSCOPE_CLI_ESCAPE_H
#define COROSCOPE_CLI_ESCAPE_H

#include <stdint.h>
#include <stdio.h>

#include "common/strbuf.h"

enum esc_mode {
	ESC_TEXT,  /* as above */
	ESC_NAME,  /* and '\\', '\'' and '"' backslashed: a name in quotes,
		      which must not end them early nor pass for another */
	ESC_DOT,   /* and '"' and '\\' backslashed: inside a DOT "string" */
	ESC_MD,    /* and Markdown punctuation backslashed (for text) */
};

/* The length of a valid UTF-8 sequence at s (n bytes left) and its code
 * point, or 0: overlong forms, surrogates and values past U+10FFFF are
 * not valid.  (The escaper's own test, shared with cli/term_cut.c.) */
size_t esc_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* What readers/objects.c keeps of a str's NUL (C0 80) or lone surrogate
 * (ED A0-BF 80-BF) at s (n bytes left): its length and code point (0
 * or U+D800 - U+DFFF), or 0 when s holds neither. */
size_t esc_kept_char(const unsigned char *s, size_t n, uint32_t *cp);

/* How much of s to show within max bytes (0: all of it): max, or less
 * so as not to split a character (whose bytes would then read as
 * invalid, \xNN). */
size_t esc_cut(const char *s, size_t max);
/* Append s (NULL: "?") escaped, at most esc_cut(s, max) bytes of it; an
 * escape is never cut. */
void esc_add(struct strbuf *sb, const char *s, enum esc_mode mode,
	     size_t max);
/* s (NULL: "?") into a line that its writer escapes later (run's
 * causes, watch's "waits on"): only its backslashes and quotes
 * backslashed, as ESC_NAME does, the rest left to the writer. */
void esc_add_name_raw(struct strbuf *sb, const char *s);
/* The same onto out. */
void esc_put(FILE *out, const char *s, enum esc_mode mode, size_t max);
/* esc_put(out, s, ESC_TEXT, 0). */
void esc_text(FILE *out, const char *s);

#endif
