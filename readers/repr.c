#include "readers/repr.h"

#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/funcs.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

static void repr_at(struct pyproc *py, uint64_t obj, int depth,
		    struct strbuf *out);
static int type_qualname_in(struct pyproc *py, uint64_t type, int no_main,
			    struct strbuf *out);

/* Py_TPFLAGS_HEAPTYPE: the same bit in every version. */
#define TPFLAGS_HEAPTYPE (1ul << 9)
/* Longest name (module, qualname) put in a repr. */
#define MAX_NAME 200

static void add_name(struct strbuf *out, const char *s)
{
	size_t n = strlen(s);

	strbuf_add(out, s, n < MAX_NAME ? n : MAX_NAME);
}

/*
 * A type's name as Python's repr() qualifies it: a static type's tp_name
 * carries its module already ("collections.OrderedDict", or "int" for
 * builtins); a class gets the __module__ of its own dict in front (but
 * not "builtins"), and its __qualname__ (ht_qualname): "f.<locals>.Outer.
 * Inner", as Python's own repr() says it.
 * 0, or -1 when not even tp_name could be read.
 */
static int type_qualname(struct pyproc *py, uint64_t type,
			 struct strbuf *out)
{
	return type_qualname_in(py, type, 0, out);
}

/* The same; no_main: nor "__main__" (as a traceback's last line). */
static int type_qualname_in(struct pyproc *py, uint64_t type, int no_main,
			    struct strbuf *out)
{
	const struct py_layout *L = &py->layout;
	uint64_t flags = 0, dict = 0, mod = 0, qual = 0;
	const char *mname, *qname;
	struct strbuf name;
	int heap;

	strbuf_init(&name);
	if (pytype_name(py, type, &name, NULL) < 0 || !name.len) {
		strbuf_release(&name);
		return -1;
	}
	heap = py_field_u64(py, type, L->tp_flags, &flags, NULL) >= 0 &&
	       (flags & TPFLAGS_HEAPTYPE);
	/* A class's __qualname__ ("f.<locals>.Outer.Inner"), as Python's
	 * own repr says it: two classes named Inner stay apart. */
	if (heap && py_field_u64(py, type, L->ht_qualname, &qual, NULL) == 1 &&
	    qual && pystr_get(py, qual, &qname, NULL) == 0 && *qname) {
		strbuf_reset(&name);
		strbuf_addstr(&name, qname);
	}
	if (heap && L->tp_dict >= 0 &&
	    py_field_u64(py, type, L->tp_dict, &dict, NULL) >= 0 && dict &&
	    pydict_get_str(py, dict, "__module__", &mod, NULL) == 0 &&
	    pystr_get(py, mod, &mname, NULL) == 0 &&
	    strcmp(mname, "builtins") &&
	    (!no_main || strcmp(mname, "__main__"))) {
		add_name(out, mname);
		strbuf_addch(out, '.');
	}
	add_name(out, name.buf);
	strbuf_release(&name);
	return 0;
}

static void generic(struct pyproc *py, uint64_t obj, uint64_t type,
		    struct strbuf *out)
{
	strbuf_addch(out, '<');
	if (type_qualname(py, type, out) < 0)
		strbuf_addstr(out, "object");
	strbuf_addf(out, " object at 0x%llx>", (unsigned long long)obj);
}

/* <class 'module.Name'>, for a type object (of any metaclass). */
static void repr_type(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	size_t mark = out->len;

	strbuf_addstr(out, "<class '");
	if (type_qualname(py, obj, out) < 0) {
		strbuf_truncate(out, mark);
		generic(py, obj, py->types.type, out);
		return;
	}
	strbuf_addstr(out, "'>");
}

/* Bytes of a PyFunctionObject searched for its func_qualname. */
#define FUNC_PROBE_BYTES 128

/*
 * A function's qualname.  From 3.11 its code carries one; before, the
 * code knows only its name, and the function's func_qualname (whose
 * place differs between versions) is found as the one str in the object
 * that reads "Outer.name", a dotted name without blanks (a docstring
 * has them).  NULL when obj is not a function.
 */
static const char *function_qualname(struct pyproc *py, uint64_t func)
{
	const struct py_code *code = py_function_code(py, func);
	uint8_t buf[FUNC_PROBE_BYTES];
	size_t off, nlen;

	if (!code || !code->name || !code->qualname)
		return code ? code->qualname : NULL;
	if (strcmp(code->qualname, code->name))
		return code->qualname;
	if (memsrc_read(py->ms, func, buf, sizeof(buf), NULL) < 0)
		return code->qualname;
	nlen = strlen(code->name);
	for (off = 16; off + 8 <= sizeof(buf); off += 8) {
		uint64_t v = le_u64(buf + off), t;
		const char *s;
		size_t len;

		if (!v || v & 7 || pyobj_read_type(py, v, &t, NULL) < 0 ||
		    t != py->types.str || pystr_get(py, v, &s, NULL) < 0)
			continue;
		len = strlen(s);
		if (len > nlen + 1 && len <= MAX_NAME && !strpbrk(s, " \t\n") &&
		    s[len - nlen - 1] == '.' && !strcmp(s + len - nlen, code->name))
			return s;
	}
	return code->qualname;
}

/* <function qualname at 0x...>. */
static int repr_function(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	const char *q = function_qualname(py, obj);

	if (!q)
		return -1;
	strbuf_addstr(out, "<function ");
	add_name(out, q);
	strbuf_addf(out, " at 0x%llx>", (unsigned long long)obj);
	return 0;
}

/* <bound method qualname of repr(self)>. */
static int repr_method(struct pyproc *py, uint64_t obj, int depth,
		       struct strbuf *out)
{
	uint64_t func, self;
	const char *q;

	if (py_bound_method(py, obj, &func, &self) < 0 ||
	    !(q = function_qualname(py, func)))
		return -1;
	strbuf_addstr(out, "<bound method ");
	add_name(out, q);
	strbuf_addstr(out, " of ");
	if (depth >= PY_REPR_MAX_DEPTH)
		strbuf_addf(out, "0x%llx", (unsigned long long)self);
	else
		repr_at(py, self, PY_REPR_MAX_DEPTH, out);
	strbuf_addch(out, '>');
	return 0;
}

/* <module 'name'>: __name__ in its md_dict, which the module type's
 * tp_dictoffset locates in every version. */
static int repr_module(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	uint64_t off = 0, dict = 0, v;
	const char *name;

	if (py_field_u64(py, py->types.module, py->layout.tp_dictoffset, &off,
			 NULL) < 0 || (int64_t)off <= 0 || off > 4096 ||
	    py_field_u64(py, obj, (int)off, &dict, NULL) < 0 || !dict ||
	    pydict_get_str(py, dict, "__name__", &v, NULL) != 0 ||
	    pystr_get(py, v, &name, NULL) < 0)
		return -1;
	strbuf_addstr(out, "<module '");
	add_name(out, name);
	strbuf_addstr(out, "'>");
	return 0;
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
	/* Cut: say how long it is, as for containers. */
	if (length > n)
		strbuf_addf(out, "... (len %zu)", length);
}

static void repr_str(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	uint32_t cps[PY_REPR_MAX_CHARS];
	size_t n, length;

	if (pystr_decode(py, obj, PY_REPR_MAX_CHARS, cps, &n, &length, NULL) < 0)
		unreadable(obj, out);
	else
		quoted(out, cps, n, length, 0);
}

static void repr_bytes(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	uint8_t raw[PY_REPR_MAX_CHARS];
	uint32_t cps[PY_REPR_MAX_CHARS];
	size_t length, n, i;

	if (pybytes_read(py, obj, raw, sizeof(raw), &length, NULL) < 0) {
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

	if (pyseq_items(py, obj, items, max, &len, NULL) < 0) {
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

	if (pydict_entries(py, obj, e, max, &used, NULL) < 0) {
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

	if (pyset_entries(py, obj, e, max, &used, NULL) < 0) {
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

/* Py_TPFLAGS_BASE_EXC_SUBCLASS: the same bit in every version. */
#define TPFLAGS_BASE_EXC (1ul << 30)

static int is_exception_type(struct pyproc *py, uint64_t type)
{
	uint64_t flags = 0;

	return py_field_u64(py, type, py->layout.tp_flags, &flags, NULL) == 1 &&
	       (flags & TPFLAGS_BASE_EXC);
}

/* An exception as Python's repr() shows it, its type named with its
 * module as a traceback's last line names it; its args at depth + 1
 * (an ExceptionGroup's list of exceptions, shown too). */
static void repr_exception(struct pyproc *py, uint64_t exc, uint64_t type,
			   int depth, struct strbuf *out)
{
	size_t max = max_items(py), len, n, i;
	uint64_t *items, args = 0;

	if (type_qualname_in(py, type, 1, out) < 0) {
		unreadable(exc, out);
		return;
	}
	items = xmalloc(max * sizeof(*items));
	strbuf_addch(out, '(');
	if (py_field_u64(py, exc, py->layout.exc_args, &args, NULL) == 1 &&
	    args && pyseq_items(py, args, items, max, &len, NULL) == 0) {
		n = len < max ? len : max;
		for (i = 0; i < n; i++) {
			if (i)
				strbuf_addstr(out, ", ");
			repr_at(py, items[i], depth + 1, out);
		}
		items_tail(out, n, len, ")");
	} else {
		strbuf_addstr(out, "?)");
	}
	free(items);
}

/* Functions, methods and modules by name, anything else generic(). */
static void named_or_generic(struct pyproc *py, uint64_t obj, uint64_t type,
			     int depth, struct strbuf *out)
{
	const char *tn = py_type_name_cached(py, type);
	size_t mark = out->len;
	int ret = -1;

	if (type == py->types.module)
		ret = repr_module(py, obj, out);
	else if (tn && !strcmp(tn, "function"))
		ret = repr_function(py, obj, out);
	else if (tn && !strcmp(tn, "method"))
		ret = repr_method(py, obj, depth, out);
	if (ret < 0) {
		strbuf_truncate(out, mark);
		generic(py, obj, type, out);
	}
}

static void repr_at(struct pyproc *py, uint64_t obj, int depth,
		    struct strbuf *out)
{
	const struct py_types *t = &py->types;
	uint64_t type;
	double d;

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
	if (pyobj_read_type(py, obj, &type, NULL) < 0 || !type) {
		unreadable(obj, out);
		return;
	}
	if (type == t->int_) {
		size_t mark = out->len;

		if (pyint_format(py, obj, out, NULL) < 0) {
			strbuf_truncate(out, mark);
			unreadable(obj, out);
		}
	} else if (type == t->float_) {
		if (pyfloat_read(py, obj, &d, NULL) < 0)
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
	} else if (type == t->type || pytype_is_subtype(py, type, t->type)) {
		repr_type(py, obj, out);
	} else if (depth <= PY_REPR_MAX_DEPTH && is_exception_type(py, type)) {
		repr_exception(py, obj, type, depth, out);
	} else {
		named_or_generic(py, obj, type, depth, out);
	}
}

void pyrepr(struct pyproc *py, uint64_t obj, struct strbuf *out)
{
	repr_at(py, obj, 0, out);
}

void pyrepr_exception(struct pyproc *py, uint64_t exc, struct strbuf *out)
{
	uint64_t type;

	if (pyobj_read_type(py, exc, &type, NULL) < 0) {
		unreadable(exc, out);
		return;
	}
	/* (Future.set_exception() of a str, or of a class) */
	if (!is_exception_type(py, type)) {
		repr_at(py, exc, 0, out);
		return;
	}
	repr_exception(py, exc, type, 0, out);
}
