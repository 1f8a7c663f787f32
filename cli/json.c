#include "cli/json.h"

#include <math.h>
#include <string.h>

#include "common/error.h"
#include "common/banned.h"

void json_init(struct json *j, FILE *out, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
}

static void indent(struct json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->out);
}

/* Before any value: a comma if needed (keys already wrote theirs). */
static void value_prefix(struct json *j)
{
	if (j->need_comma[j->depth] == 2) {
		j->need_comma[j->depth] = 1;  /* after a key */
		return;
	}
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	if (j->depth)
		indent(j);
	j->need_comma[j->depth] = 1;
}

static void begin(struct json *j, char c)
{
	value_prefix(j);
	fputc(c, j->out);
	if (++j->depth >= JSON_MAX_DEPTH)
		CS_BUG("json nesting too deep");
	j->need_comma[j->depth] = 0;
}

static void finish(struct json *j, char c)
{
	int had = j->need_comma[j->depth];

	if (j->depth <= 0)
		CS_BUG("json close without open");
	j->depth--;
	if (had)
		indent(j);
	fputc(c, j->out);
	if (j->depth == 0)
		fputc('\n', j->out);
}

void json_begin_object(struct json *j) { begin(j, '{'); }
void json_end_object(struct json *j) { finish(j, '}'); }
void json_begin_array(struct json *j) { begin(j, '['); }
void json_end_array(struct json *j) { finish(j, ']'); }

void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		int n = 0, k;

		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			p++;
			continue;
		}
		if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc(c, f);
			p++;
			continue;
		}
		/* Pass valid UTF-8 sequences through, replace the rest. */
		if (c >= 0xC2 && c <= 0xDF)
			n = 1;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3;
		for (k = 1; n && k <= n; k++)
			if ((p[k] & 0xC0) != 0x80)
				n = 0;
		if (!n) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, (size_t)n + 1, f);
		p += n + 1;
	}
}

void json_key(struct json *j, const char *key)
{
	value_prefix(j);
	fputc('"', j->out);
	json_escape(j->out, key);
	fputs(j->pretty ? "\": " : "\":", j->out);
	j->need_comma[j->depth] = 2;
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	value_prefix(j);
	fputc('"', j->out);
	json_escape(j->out, s);
	fputc('"', j->out);
}

void json_int(struct json *j, long long v)
{
	value_prefix(j);
	fprintf(j->out, "%lld", v);
}

void json_uint(struct json *j, unsigned long long v)
{
	value_prefix(j);
	fprintf(j->out, "%llu", v);
}

void json_double(struct json *j, double v)
{
	value_prefix(j);
	if (isfinite(v))
		fprintf(j->out, "%.3f", v);
	else
		fputs("null", j->out);
}

void json_bool(struct json *j, int v)
{
	value_prefix(j);
	fputs(v ? "true" : "false", j->out);
}

void json_null(struct json *j)
{
	value_prefix(j);
	fputs("null", j->out);
}
