#include "readers/remote_tb.h"

#include <string.h>

#include "common/banned.h"

static const char FILE_MARK[] = "  File \"";
static const char LINE_MARK[] = "\", line ";
static const char IN_MARK[] = ", in ";

#define LEN(s) (sizeof(s) - 1)

/* The end of the line at p (its '\n', or end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
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

/* A line of the entry: `F", line N, in NAME` (after FILE_MARK); one
 * cut short (a newline in the file name) is the file so far, its line
 * and function not known. */
static void parse_entry(const char *p, const char *e,
			struct remote_tb_entry *out)
{
	const char *mark = last_in(p, e, LINE_MARK, LEN(LINE_MARK)), *q;
	long line = 0;
	int digits = 0;

	if (!mark) {
		out->file = p;
		out->file_len = (size_t)(e - p);
		out->function = e;
		out->function_len = 0;
		out->line = -1;
		return;
	}
	out->file = p;
	out->file_len = (size_t)(mark - p);
	q = mark + LEN(LINE_MARK);
	for (; q < e && *q >= '0' && *q <= '9' && digits < 9; q++, digits++)
		line = line * 10 + (*q - '0');
	out->line = digits && (q == e || *q < '0' || *q > '9') ? line : -1;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	out->function = q;
	out->function_len = 0;
	if ((size_t)(e - q) >= LEN(IN_MARK) &&
	    !memcmp(q, IN_MARK, LEN(IN_MARK))) {
		out->function = q + LEN(IN_MARK);
		out->function_len = (size_t)(e - out->function);
	}
}

int remote_tb_next(const char **pos, const char *end,
		   struct remote_tb_entry *out)
{
	const char *p = *pos, *e, *s, *se;

	/* Bounded by the text: each turn moves p past a line. */
	while (p && p < end) {
		e = line_end(p, end);
		if ((size_t)(e - p) < LEN(FILE_MARK) ||
		    memcmp(p, FILE_MARK, LEN(FILE_MARK))) {
			p = e < end ? e + 1 : end;
			continue;
		}
		parse_entry(p + LEN(FILE_MARK), e, out);
		out->source = NULL;
		out->source_len = 0;
		p = e < end ? e + 1 : end;
		/* The source line, indented further, unless another entry
		 * or the exception's line comes first. */
		if (p < end) {
			se = line_end(p, end);
			for (s = p; s < se && *s == ' '; s++)
				;
			if (s - p > 2 && s < se) {
				out->source = s;
				out->source_len = (size_t)(se - s);
				if (out->source_len && s[out->source_len - 1] == '\r')
					out->source_len--;
				p = se < end ? se + 1 : end;
			}
		}
		*pos = p;
		return 1;
	}
	*pos = end;
	return 0;
}
