#include "readers/remote_tb.h"

#include <string.h>

#include "common/banned.h"

static const char FILE_MARK[] = "  File \"";
static const char LINE_MARK[] = "\", line ";
static const char IN_MARK[] = ", in ";
static const char HEADER[] = "Traceback (most recent call last):";
static const char GROUP_HEADER[] =
	"  + Exception Group Traceback (most recent call last):";
static const char GROUP_PREFIX[] = "  | ";
static const char REPEATED[] = "  [Previous line repeated ";
/* What a chain puts between its exceptions' blocks */
static const char CAUSED[] =
	"The above exception was the direct cause of the following exception:";
static const char DURING[] =
	"During handling of the above exception, another exception occurred:";

#define LEN(s) (sizeof(s) - 1)

/* One line of the text: [p, e), e at its '\n' or the text's end, its
 * '\r' left out; next: the line after. */
struct line {
	const char *p, *e, *next;
};

static void line_at(const char *p, const char *end, struct line *l)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	l->p = p;
	l->e = nl ? nl : end;
	l->next = nl ? nl + 1 : end;
	if (l->e > l->p && l->e[-1] == '\r')
		l->e--;
}

static int starts(const struct line *l, size_t skip, const char *s, size_t n)
{
	return (size_t)(l->e - l->p) >= skip + n && !memcmp(l->p + skip, s, n);
}

static int is(const struct line *l, const char *s, size_t n)
{
	return (size_t)(l->e - l->p) == n && !memcmp(l->p, s, n);
}

/* The last `needle` within [p, e), or NULL. */
static const char *last_in(const char *p, const char *e, const char *needle,
			   size_t n)
{
	const char *found = NULL, *q = p;

	/* bounded by the line: each match moves q on */
	while ((size_t)(e - q) >= n) {
		const char *m = memchr(q, needle[0], (size_t)(e - q) - n + 1);

		if (!m)
			break;
		if (!memcmp(m, needle, n))
			found = m;
		q = m + 1;
	}
	return found;
}

/* Is line l, past its prefix, part of a block: an entry, a source or
 * caret line (indented further), a "[Previous line repeated ...]"? */
static int in_block(const struct line *l, size_t prefix)
{
	if (prefix && !starts(l, 0, GROUP_PREFIX, prefix))
		return 0;
	return starts(l, prefix, FILE_MARK, LEN(FILE_MARK)) ||
	       starts(l, prefix, "   ", 3) ||
	       starts(l, prefix, REPEATED, LEN(REPEATED));
}

/* Does the closing line l (past its prefix) name type: "type", "type:
 * ...", "mod.type: ..."? */
static int names_type(const struct line *l, size_t prefix, const char *type)
{
	size_t n = strlen(type);
	const char *p = l->p + prefix, *colon;

	if (!n || l->e - l->p < (long)prefix)
		return 0;
	colon = memchr(p, ':', (size_t)(l->e - p));
	if (!colon)
		colon = l->e;
	return (size_t)(colon - p) >= n && !memcmp(colon - n, type, n) &&
	       (colon - n == p || colon[-(long)n - 1] == '.');
}

int remote_tb_block(const char *text, const char *end, const char *type,
		    const char **start, size_t *prefix_len)
{
	const char *p = text, *last = NULL, *named = NULL;
	size_t last_prefix = 0, named_prefix = 0, prefix;
	int chained = 0;
	struct line l;

	/* Bounded by the text: each turn moves p past a line. */
	while (p < end) {
		line_at(p, end, &l);
		p = l.next;
		if (is(&l, CAUSED, LEN(CAUSED)) || is(&l, DURING, LEN(DURING)))
			chained = 1;
		if (is(&l, HEADER, LEN(HEADER)))
			prefix = 0;
		else if (is(&l, GROUP_HEADER, LEN(GROUP_HEADER)))
			prefix = LEN(GROUP_PREFIX);
		else
			continue;
		/* (after the first, only a chain's next: a header that
		 * follows a block with no separator is a message's text) */
		if (last && !chained)
			continue;
		chained = 0;
		last = p;
		last_prefix = prefix;
		/* its lines, then the closing one */
		while (p < end) {
			line_at(p, end, &l);
			if (!in_block(&l, prefix))
				break;
			p = l.next;
		}
		if (p < end && type && names_type(&l, prefix, type)) {
			named = last;
			named_prefix = prefix;
		}
	}
	if (!last)
		return 0;
	*start = named ? named : last;
	*prefix_len = named ? named_prefix : last_prefix;
	return named ? 2 : 1;
}

/* An entry's line [p, e): `F", line N, in NAME` (after FILE_MARK); one
 * cut short (a newline in the file name) is the file so far, its line
 * and function not known.  0 when cut short. */
static int parse_entry(const char *p, const char *e,
		       struct remote_tb_entry *out)
{
	const char *mark = last_in(p, e, LINE_MARK, LEN(LINE_MARK)), *q, *in;
	long line = 0;
	int digits = 0;

	out->function = e;
	out->function_len = 0;
	out->line = -1;
	out->file = p;
	if (!mark) {
		out->file_len = (size_t)(e - p);
		return 0;
	}
	out->file_len = (size_t)(mark - p);
	q = mark + LEN(LINE_MARK);
	in = last_in(q, e, IN_MARK, LEN(IN_MARK));
	if (!in)
		in = e;
	for (; q < in && *q >= '0' && *q <= '9' && digits < 9; q++, digits++)
		line = line * 10 + (*q - '0');
	if (digits && q == in)
		out->line = line;
	if (in < e) {
		out->function = in + LEN(IN_MARK);
		out->function_len = (size_t)(e - out->function);
	}
	return 1;
}

int remote_tb_next(const char **pos, const char *end, size_t prefix_len,
		   struct remote_tb_entry *out)
{
	const char *p = *pos, *s;
	struct line l, src;

	/* Bounded by the text: each turn moves p past a line. */
	while (p < end) {
		line_at(p, end, &l);
		if (!in_block(&l, prefix_len)) {
			*pos = p;       /* at its closing line */
			return 0;
		}
		p = l.next;
		if (!starts(&l, prefix_len, FILE_MARK, LEN(FILE_MARK)))
			continue;
		out->source = NULL;
		out->source_len = 0;
		if (!parse_entry(l.p + prefix_len + LEN(FILE_MARK), l.e, out)) {
			/* (the rest of its line is on the next: no block) */
			*pos = end;
			return 1;
		}
		/* The source line, indented further. */
		if (p < end) {
			line_at(p, end, &src);
			if (starts(&src, prefix_len, "   ", 3)) {
				for (s = src.p + prefix_len; s < src.e &&
				     *s == ' '; s++)
					;
				if (s < src.e) {
					out->source = s;
					out->source_len = (size_t)(src.e - s);
				}
				p = src.next;
			}
		}
		*pos = p;
		return 1;
	}
	*pos = end;
	return 0;
}
