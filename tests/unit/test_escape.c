/* cli/escape.c: what each mode keeps and what it escapes. */
#include "cli/escape.h"

#include <string.h>

#include "tests/unit/check.h"

static void expect(const char *in, enum esc_mode mode, size_t max,
		   const char *want)
{
	struct strbuf sb;

	strbuf_init(&sb);
	esc_add(&sb, in, mode, max);
	CHECK(!strcmp(sb.buf, want), "mode %d: got '%s', want '%s'", (int)mode,
	      sb.buf, want);
	strbuf_release(&sb);
}

int main(void)
{
	/* plain text and valid UTF-8 stay as they are */
	expect("Task-1 worker.run", ESC_TEXT, 0, "Task-1 worker.run");
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d", ESC_TEXT, 0,
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x8d");
	expect("a\\nb 'q'", ESC_TEXT, 0, "a\\nb 'q'");
	/* C0, DEL, C1 */
	expect("a\nb\rc\td", ESC_TEXT, 0, "a\\nb\\rc\\td");
	expect("\x1b]0;x\x07\x1b[2J", ESC_TEXT, 0,
	       "\\x1b]0;x\\x07\\x1b[2J");
	expect("\x7f|\xc2\x9b|\xc2\x85", ESC_TEXT, 0,
	       "\\x7f|\\xc2\\x9b|\\xc2\\x85");
	/* invalid UTF-8: overlong, surrogate, stray, truncated, > U+10FFFF */
	expect("\xc0\xaf", ESC_TEXT, 0, "\\xc0\\xaf");
	expect("\xed\x9f\xc0", ESC_TEXT, 0, "\\xed\\x9f\\xc0");
	/* a str's NUL and lone surrogates, as readers/objects.c keeps them */
	expect("a\xc0\x80" "b", ESC_TEXT, 0, "a\\x00b");
	expect("\xed\xa0\x80|\xed\xb3\xbf", ESC_TEXT, 0, "\\ud800|\\udcff");
	expect("\xc0\x80", ESC_DOT, 0, "\\\\x00");
	/* names: their quotes and backslashes backslashed, unlike a repr's */
	expect("a\\nb 'q' \"r\"\n", ESC_NAME, 0, "a\\\\nb \\'q\\' \\\"r\\\"\\n");
	expect("x\x80y", ESC_TEXT, 0, "x\\x80y");
	expect("\xe2\x82", ESC_TEXT, 0, "\\xe2\\x82");
	expect("\xf4\x90\x80\x80", ESC_TEXT, 0, "\\xf4\\x90\\x80\\x80");
	/* characters that reorder text */
	expect("a\xe2\x80\xae" "b", ESC_TEXT, 0, "a\\u202eb");
	/* DOT: quotes and backslashes, and the escapes' own backslash */
	expect("say \"hi\" \\ \n", ESC_DOT, 0, "say \\\"hi\\\" \\\\ \\\\n");
	/* Markdown */
	expect("a|b*c_d[e]<f>#`g\n", ESC_MD, 0,
	       "a\\|b\\*c\\_d\\[e\\]\\<f\\>\\#\\`g\\n");
	/* entities, strike-through, GitHub's math */
	expect("&lt;b&gt; ~~s~~ $x$", ESC_MD, 0,
	       "\\&lt;b\\&gt; \\~\\~s\\~\\~ \\$x\\$");
	/* GitHub's autolinks: "http://" and "www." */
	expect("see https://x.example/a or www.x.example", ESC_MD, 0,
	       "see https\\://x\\.example/a or www\\.x\\.example");
	/* cut at max source bytes, never inside a character */
	expect("abcdef", ESC_TEXT, 3, "abc");
	expect("a\xc3\xa9", ESC_TEXT, 2, "a");
	expect("a\xe2\x82\xac" "b", ESC_TEXT, 3, "a");
	expect("a\xe2\x82\xac" "b", ESC_TEXT, 4, "a\xe2\x82\xac");
	expect("\xf0\x9f\x98\x80", ESC_TEXT, 3, "");
	/* a lone surrogate as the readers keep it: whole or not at all */
	expect("S\xed\xb3\x80", ESC_TEXT, 2, "S");
	/* bytes that are no character: cut where asked */
	expect("a\x80\x80\x80\x80\x80", ESC_TEXT, 3, "a\\x80\\x80");
	expect(NULL, ESC_TEXT, 0, "?");
	return CHECK_DONE("test_escape");
}
