/*
 * Lines for a screen that does not wrap them: the live view's rows and
 * events, cut to the screen's width in display columns, not bytes.
 *
 * The line is already escaped (cli/escape.h: no control characters, no
 * invalid UTF-8).  In a UTF-8 locale each character takes its wcwidth()
 * columns (a CJK one two, a combining accent none); a character the
 * locale cannot show, and in any other locale every byte outside ASCII,
 * is written as an escape ("\u0378", "\xe3") that is never cut: curses
 * would show such bytes as "~B" and "M-C" pieces, and a cut counted in
 * bytes left a line of CJK names at a third of the screen.
 */
#ifndef COROSCOPE_CLI_TERM_CUT_H
#define COROSCOPE_CLI_TERM_CUT_H

#include <stddef.h>

#include "common/strbuf.h"

/* Take LC_CTYPE from the environment; 1 when it is UTF-8. */
int term_locale_utf8(void);
/* Append what of s fits in cols columns; returns the columns used. */
size_t term_cut(struct strbuf *out, const char *s, size_t cols, int utf8);
/* Append s whole, then spaces up to width columns (none when wider). */
void term_pad(struct strbuf *out, const char *s, size_t width, int utf8);

#endif
