#include "readers/repr.h"

#include <stdlib.h>
#include <string.h>

#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

static void repr_at(struct pyproc *py, uint64_t obj, int depth,
		    struct strbuf *out);

static void generic(struct pyproc *py, uint64_t obj, uint64_t type,
		    struct strbuf *out)
{
	struct strbuf name;
	struct cs_err err;

	strbuf_init(&name);
	cs_err_init(&err);
	if (pytype_name(py, type, &name, &err) < 0 || !name.len)
		strbuf_addstr(&name, "object");
	strbuf_addf(out, "<%s object at 0x%llx>", name.buf,
		    (unsigned long long)obj);
	strbuf_release(&name);
}

static void unreadable(uint64_t obj, struct strbuf *out)
{
	strbuf_addf(out, "<unreadable object at 0x%llx>",
		    (unsigned long long)obj);
}

/*
 * Python prints a non-ASCII code point as itself when it is printable.
 * We cannot carry the Unicode database, so this approximates
 * str.isprintable() for the ranges that matter: C0/C1 controls, the
 * no-break and format spaces, surrogates, private use, non-characters.
 */
static int printable(uint32_t c)
{
	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x7f)
		return 1;
	if (c <= 0xa0 || c == 0xad)
		return 0;
	if ((c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f) ||
	    (c >= 0x205f && c <= 0x206f) || c == 0x3000 || c == 0xfeff ||
	    (c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff9 && c <= 0xfffb) ||
	    (c & 0xfffe) == 0xfffe || c >= 0xf0000 || c == 0x1680 ||
	    c == 0x180e || c == 0x61c)
		return 0;
	return 1;
}

/* The quote repr() picks: ' unless the text has ' and no ". */
static char pick_quote(const uint32_t *cps, size_t n)
{
	int single = 0, dbl = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		single |= cps[i] == '\'';
		dbl |= cps[i] == '"';
	}
	return single && !dbl ? '"' : '\'';
}

static void escape_char(struct strbuf *out, uint32_t c, char quote,
			int is_bytes)
{
	if (c == (uint32_t)quote || c == '\\')
		strbuf_addf(out, "\\%c", (char)c);
	else if (c == '\t')
		strbuf_addstr(out, "\\t");
	else if (c == '\n')
		strbuf_addstr(out, "\\n");
	else if (c == '\r')
		strbuf_addstr(out, "\\r");
	else if (c >= 0x20 && c < 0x7f)
		strbuf_addch(out, (int)c);
	else if (!is_bytes && printable(c))
		strbuf_add_utf8(out, c);
	else if (c <= 0xff)
		strbuf_addf(out, "\\x%02x", c);
	else if (c <= 0xffff)
		strbuf_addf(out, "\\u%04x", c);
	else
		strbuf_addf(out, "\\U%08x", c);
}

static void quoted(struct strbuf *out, const uint32_t *cps, size_t n,
		   size_t length, int is_bytes)
{
	char quote = pick_quote(cps, n);
	size_t i;

	if (is_bytes)
		strbuf_addch(out, 'b');
	strbuf_addch(out, quote);
	for (i = 0; i < n; i++)
		escape_char(out, cps[i], quote, is_bytes);
	strbuf_addch(out, quote);
	if (length > n)
		strbuf_addstr(out, "...");
}

static void repr_str(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	uint32_t cps[PY_REPR_MAX_CHARS];
	size_t n, length;
	struct cs_err err;

	cs_err_init(&err);
	if (pystr_decode(py, obj, PY_REPR_MAX_CHARS, cps, &n, &length, &err) < 0)
		unreadable(obj, out);
	else
		quoted(out, cps, n, length, 0);
}

static void repr_bytes(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	uint8_t raw[PY_REPR_MAX_CHARS];
	uint32_t cps[PY_REPR_MAX_CHARS];
	size_t length, n, i;
	struct cs_err err;

	cs_err_init(&err);
	if (pybytes_read(py, obj, raw, sizeof(raw), &length, &err) < 0) {
		unreadable(obj, out);
		return;
	}
	n = length < sizeof(raw) ? length : sizeof(raw);
	for (i = 0; i < n; i++)
		cps[i] = raw[i];
	quoted(out, cps, n, length, 1);
}

/* How many items of a container to show: --max-items, or the default. */
static size_t max_items(const struct pyproc *py)
{
	return py->repr_max_items ? py->repr_max_items : PY_REPR_MAX_ITEMS;
}

static void items_tail(struct strbuf *out, size_t shown, size_t len,
		       const char *close)
{
	if (len > shown)
		strbuf_addstr(out, shown ? ", ..." : "...");
	strbuf_addstr(out, close);
	if (len > shown)
		strbuf_addf(out, " (len %zu)", len);
}

static void repr_seq(struct pyproc *py, uint64_t obj, int is_tuple,
		     int depth, struct strbuf *out)
{
	size_t max = max_items(py), len, n, i;
	uint64_t *items = xmalloc(max * sizeof(*items));
	struct cs_err err;

	cs_err_init(&err);
	if (pyseq_items(py, obj, items, max, &len, &err) < 0) {
		free(items);
		unreadable(obj, out);
		return;
	}
	n = len < max ? len : max;
	strbuf_addch(out, is_tuple ? '(' : '[');
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		repr_at(py, items[i], depth + 1, out);
	}
	if (is_tuple && len == 1)
		strbuf_addch(out, ',');
	items_tail(out, n, len, is_tuple ? ")" : "]");
	free(items);
}

static void repr_dict(struct pyproc *py, uint64_t obj, int depth,
		      struct strbuf *out)
{
	size_t max = max_items(py), used, n, i;
	struct pydict_entry *e = xmalloc(max * sizeof(*e));
	struct cs_err err;

	cs_err_init(&err);
	if (pydict_entries(py, obj, e, max, &used, &err) < 0) {
		free(e);
		unreadable(obj, out);
		return;
	}
	n = used < max ? used : max;
	strbuf_addch(out, '{');
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		repr_at(py, e[i].key, depth + 1, out);
		strbuf_addstr(out, ": ");
		repr_at(py, e[i].value, depth + 1, out);
	}
	items_tail(out, n, used, "}");
	free(e);
}

static void repr_set(struct pyproc *py, uint64_t obj, int frozen, int depth,
		     struct strbuf *out)
{
	size_t max = max_items(py), used, n, i;
	struct pydict_entry *e = xmalloc(max * sizeof(*e));
	struct cs_err err;

	cs_err_init(&err);
	if (pyset_entries(py, obj, e, max, &used, &err) < 0) {
		free(e);
		unreadable(obj, out);
		return;
	}
	n = used < max ? used : max;
	if (used == 0) {
		free(e);
		strbuf_addstr(out, frozen ? "frozenset()" : "set()");
		return;
	}
	strbuf_addstr(out, frozen ? "frozenset({" : "{");
	for (i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		repr_at(py, e[i].key, depth + 1, out);
	}
	items_tail(out, n, used, frozen ? "})" : "}");
	free(e);
}

static void repr_at(struct pyproc *py, uint64_t obj, int depth,
		    struct strbuf *out)
{
	const struct py_types *t = &py->types;
	struct cs_err err;
	uint64_t type;
	double d;

	cs_err_init(&err);
	if (obj == t->none && t->none) {
		strbuf_addstr(out, "None");
		return;
	}
	if (obj == t->true_ && t->true_) {
		strbuf_addstr(out, "True");
		return;
	}
	if (obj == t->false_ && t->false_) {
		strbuf_addstr(out, "False");
		return;
	}
	if (pyobj_read_type(py, obj, &type, &err) < 0 || !type) {
		unreadable(obj, out);
		return;
	}
	if (type == t->int_) {
		size_t mark = out->len;

		if (pyint_format(py, obj, out, &err) < 0) {
			out->len = mark;
			out->buf[mark] = '\0';
			unreadable(obj, out);
		}
	} else if (type == t->float_) {
		if (pyfloat_read(py, obj, &d, &err) < 0)
			unreadable(obj, out);
		else
			pyfloat_repr(d, out);
	} else if (type == t->str) {
		repr_str(py, obj, out);
	} else if (type == t->bytes) {
		repr_bytes(py, obj, out);
	} else if (depth >= PY_REPR_MAX_DEPTH &&
		   (type == t->tuple || type == t->list || type == t->dict ||
		    type == t->set || type == t->frozenset)) {
		generic(py, obj, type, out);
	} else if (type == t->tuple || type == t->list) {
		repr_seq(py, obj, type == t->tuple, depth, out);
	} else if (type == t->dict) {
		repr_dict(py, obj, depth, out);
	} else if (type == t->set || type == t->frozenset) {
		repr_set(py, obj, type == t->frozenset, depth, out);
	} else {
		generic(py, obj, type, out);
	}
}

void pyrepr(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	repr_at(py, obj, 0, out);
}
