/*
 * readers/remote_tb.c on traceback texts as a process pool's worker
 * sends them: which block is the exception's own (a chain's cause
 * before it, an exception group's, a traceback quoted in the message
 * after it), and its entries (sources, carets, repeated lines, odd
 * line numbers, CRLF, a newline in a file name).
 */
#include "readers/remote_tb.h"

#include <string.h>

#include "tests/unit/check.h"

struct want {
	const char *file, *function, *source;
	long line;
};

/* The entries of text's block for type, against want[0..n). */
static void check_entries(const char *what, const char *text,
			  const char *type, const struct want *want, size_t n)
{
	const char *end = text + strlen(text), *pos;
	struct remote_tb_entry e;
	size_t prefix = 0, i = 0;

	if (!remote_tb_block(text, end, type, &pos, &prefix)) {
		CHECK(n == 0, "%s: no block", what);
		return;
	}
	while (remote_tb_next(&pos, end, prefix, &e)) {
		if (i >= n) {
			CHECK(0, "%s: more entries than %zu", what, n);
			return;
		}
		CHECK(e.file_len == strlen(want[i].file) &&
		      !memcmp(e.file, want[i].file, e.file_len),
		      "%s: entry %zu's file '%.*s'", what, i, (int)e.file_len,
		      e.file);
		CHECK(e.function_len == strlen(want[i].function) &&
		      !memcmp(e.function, want[i].function, e.function_len),
		      "%s: entry %zu's function '%.*s'", what, i,
		      (int)e.function_len, e.function);
		CHECK(e.line == want[i].line, "%s: entry %zu's line %ld", what,
		      i, e.line);
		CHECK(want[i].source ?
		      e.source && e.source_len == strlen(want[i].source) &&
		      !memcmp(e.source, want[i].source, e.source_len) :
		      !e.source, "%s: entry %zu's source", what, i);
		i++;
	}
	CHECK(i == n, "%s: %zu entries, not %zu", what, i, n);
}

static void test_chain_and_message(void)
{
	static const char text[] =
		"\n\"\"\"\nTraceback (most recent call last):\n"
		"  File \"a.py\", line 3, in f\n    raise KeyError(1)\n"
		"KeyError: 1\n\nThe above exception was the direct cause of "
		"the following exception:\n\nTraceback (most recent call "
		"last):\n  File \"/x/concurrent/futures/process.py\", line "
		"263, in _process_worker\n    r = call_item.fn()\n"
		"        ^^^^^^^^^^^^^^\n  File \"b.py\", line 7, in g\n"
		"    raise RuntimeError('child failed')\n"
		"RuntimeError: child failed:\nTraceback (most recent call "
		"last):\n  File \"/srv/other.py\", line 99, in elsewhere\n"
		"ValueError: x\n\"\"\"";
	static const struct want w[] = {
		{ "/x/concurrent/futures/process.py", "_process_worker",
		  "r = call_item.fn()", 263 },
		{ "b.py", "g", "raise RuntimeError('child failed')", 7 },
	};

	const char *pos;
	size_t prefix;

	check_entries("chain", text, "RuntimeError", w, 2);
	/* (no closing line names it: the chain's last block, not the one
	 * the message quotes, no separator before it) */
	check_entries("unnamed", text, "OSError", w, 2);
	CHECK(remote_tb_block(text, text + strlen(text), "OSError", &pos,
			      &prefix) == 1, "unnamed: the last, not named");
	CHECK(remote_tb_block(text, text + strlen(text), "RuntimeError", &pos,
			      &prefix) == 2, "chain: named");
	/* (the quoted block's closing line names ValueError: no block) */
	check_entries("quoted", text, "ValueError", w, 2);
}

/* A message that quotes a traceback of the exception's own type, as a
 * program could to mislead: the real block still, the first. */
static void test_crafted_message(void)
{
	static const char text[] =
		"\n\"\"\"\nTraceback (most recent call last):\n"
		"  File \"p.py\", line 9, in crafted\n    raise ValueError(m)\n"
		"ValueError: x\nTraceback (most recent call last):\n"
		"  File \"/etc/fake.py\", line 42, in evil\n"
		"ValueError: y\n\"\"\"";
	static const struct want w[] = {
		{ "p.py", "crafted", "raise ValueError(m)", 9 },
	};

	check_entries("crafted", text, "ValueError", w, 1);
}

static void test_group(void)
{
	static const char text[] =
		"Traceback (most recent call last):\n"
		"  File \"a.py\", line 4, in f\n    raise KeyError(1)\n"
		"KeyError: 1\n\nThe above exception was the direct cause of "
		"the following exception:\n\n"
		"  + Exception Group Traceback (most recent call last):\n"
		"  |   File \"b.py\", line 8, in <module>\n  |     f()\n"
		"  |   File \"b.py\", line 6, in f\n  |     raise EG()\n"
		"  | ExceptionGroup: grp (1 sub-exception)\n"
		"  +-+---------------- 1 ----------------\n"
		"    | Traceback (most recent call last):\n"
		"    |   File \"c.py\", line 1, in h\n"
		"    | ValueError: 3\n";
	static const struct want w[] = {
		{ "b.py", "<module>", "f()", 8 },
		{ "b.py", "f", "raise EG()", 6 },
	};

	check_entries("group", text, "ExceptionGroup", w, 2);
}

static void test_odd_entries(void)
{
	static const char text[] =
		"Traceback (most recent call last):\r\n"
		"  File \"w.py\", line 9, in g\r\n    g(n-1)\r\n"
		"    ^^^^^^\r\n  [Previous line repeated 47 more times]\r\n"
		"  File \"w.py\", line -1, in h\r\n"
		"  File \"x\", line 99999999999, in k\r\n"
		"  File \"q\", line 1\r\n    bad syntax\r\n"
		"  File \"ev\"il\x1b\x07\n.py\", line 2, in evil\n"
		"ValueError\n";
	static const struct want w[] = {
		{ "w.py", "g", "g(n-1)", 9 },
		{ "w.py", "h", NULL, -1 },
		{ "x", "k", NULL, -1 },
		{ "q", "", "bad syntax", 1 },
		{ "ev\"il\x1b\x07", "", NULL, -1 },
	};

	check_entries("odd", text, "ValueError", w, 5);
	check_entries("empty", "", "ValueError", w, 0);
	check_entries("bare", "  File \"", "ValueError", w, 0);
}

int main(void)
{
	test_chain_and_message();
	test_group();
	test_crafted_message();
	test_odd_entries();
	return CHECK_DONE("test_remote_tb");
}
