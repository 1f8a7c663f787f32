#include "readers/objects.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "readers/fields.h"
#include "common/banned.h"

/* Longest str kept in the name cache, in code points. */
#define NAME_MAX_CHARS 4096
/* Ints longer than this many digits are summarised, not converted. */
#define INT_MAX_DIGITS 500
/* tp_base chains are short; anything longer is a cycle or garbage. */
#define MAX_TYPE_DEPTH 64

int pyobj_read_type(struct pyproc *py, uint64_t obj, uint64_t *type,
		    struct cs_err *err)
{
	int ret;

	*type = 0;   /* on every path: callers may test it after a failure */
	if (!obj)
		return cs_fail(err, CS_ERR_MEMORY, "null object pointer");
	ret = py_field_u64(py, obj, py->layout.ob_type, type, err);
	return ret < 0 ? ret : 0;
}

/* A NUL-terminated C string of the target, at most max bytes. */
static int read_cstring(struct pyproc *py, uint64_t addr, size_t max,
			struct strbuf *out, struct cs_err *err)
{
	char buf[256];
	size_t done = 0;

	while (done < max) {
		size_t want = max - done < sizeof(buf) ? max - done : sizeof(buf);
		long got = memsrc_read_partial(py->ms, addr + done, buf, want, err);
		char *nul;

		if (got < 0)
			return (int)got;
		if (got == 0)
			return cs_fail(err, CS_ERR_MEMORY,
				       "cannot read string at 0x%llx",
				       (unsigned long long)addr);
		nul = memchr(buf, '\0', (size_t)got);
		if (nul) {
			strbuf_add(out, buf, (size_t)(nul - buf));
			return 0;
		}
		strbuf_add(out, buf, (size_t)got);
		done += (size_t)got;
	}
	return 0;
}

int pytype_name(struct pyproc *py, uint64_t type, struct strbuf *out,
		struct cs_err *err)
{
	uint64_t name;
	int ret;

	ret = py_field_u64(py, type, py->layout.tp_name, &name, err);
	if (ret < 0)
		return ret;
	return read_cstring(py, name, 200, out, err);
}

/*
 * The first entries of type's MRO into items (at most MAX_TYPE_DEPTH):
 * how many, 0 when it has none that is exactly a tuple.  Read here, not
 * through pyseq_items(), which asks pytype_is_subtype() what its object
 * is: a type whose tp_mro is an instance of itself would recurse.
 */
static size_t mro_items(struct pyproc *py, uint64_t type, uint64_t *items)
{
	const struct py_layout *L = &py->layout;
	uint64_t mro = 0, mro_type = 0, n = 0;
	struct cs_err ignored;

	cs_err_init(&ignored);
	if (py_field_u64(py, type, L->tp_mro, &mro, &ignored) <= 0 || !mro ||
	    pyobj_read_type(py, mro, &mro_type, &ignored) < 0 ||
	    mro_type != py->types.tuple ||
	    py_field_u64(py, mro, L->ob_size, &n, &ignored) <= 0 ||
	    (int64_t)n <= 0)
		return 0;
	if (n > MAX_TYPE_DEPTH)
		n = MAX_TYPE_DEPTH;
	if (py_read_words(py, mro + (uint64_t)L->tuple_items, items, (size_t)n,
			  &ignored) < 0)
		return 0;
	return (size_t)n;
}

int pytype_is_subtype(struct pyproc *py, uint64_t type, uint64_t base)
{
	uint64_t items[MAX_TYPE_DEPTH];
	struct cs_err ignored;
	size_t n, i;
	int depth;

	cs_err_init(&ignored);
	if (!type || !base)
		return 0;
	if (type == base)
		return 1;
	/* Its MRO, every base in it: tp_base is only the one whose layout
	 * it extends, the first of `class Q(Mixin, asyncio.Queue)`.  (A
	 * class still being made has none: its tp_base chain, then.) */
	n = mro_items(py, type, items);
	if (n) {
		for (i = 0; i < n; i++)
			if (items[i] == base)
				return 1;
		return 0;
	}
	for (depth = 0; type && depth < MAX_TYPE_DEPTH; depth++) {
		if (type == base)
			return 1;
		if (py_field_u64(py, type, py->layout.tp_base, &type,
				 &ignored) < 0)
			return 0;
	}
	return 0;
}

int pystr_decode(struct pyproc *py, uint64_t obj, size_t max_chars,
		 uint32_t *codepoints, size_t *ncodepoints, size_t *length,
		 struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t hdr[PY_LAYOUT_MAX_STRUCT];
	size_t hdrlen = (size_t)L->u_compact_size, n, i;
	uint32_t state, kind;
	int64_t len;
	uint64_t type, data;
	uint8_t *raw;
	long got;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	if (type != py->types.str && !pytype_is_subtype(py, type, py->types.str))
		return cs_fail(err, CS_ERR_MEMORY, "object at 0x%llx is not a str",
			       (unsigned long long)obj);
	if (hdrlen > sizeof(hdr))
		CS_BUG("PyCompactUnicodeObject larger than %zu", sizeof(hdr));
	/* An ASCII str is shorter than the compact header: read what exists. */
	got = memsrc_read_partial(py->ms, obj, hdr, hdrlen, err);
	if (got < 0)
		return (int)got;
	if ((size_t)got < (size_t)L->u_ascii_size)
		return cs_fail(err, CS_ERR_MEMORY, "cannot read str at 0x%llx",
			       (unsigned long long)obj);
	state = field_u32(hdr, (size_t)got, L->u_state);
	len = field_i64(hdr, (size_t)got, L->u_length);
	kind = (state >> L->u_state_kind_shift) & 7;
	if ((kind != 1 && kind != 2 && kind != 4) ||
	    !((state >> L->u_state_compact_shift) & 1) ||
	    len < 0 || (uint64_t)len > PY_MAX_STR_BYTES / kind)
		return cs_fail(err, CS_ERR_MEMORY,
			       "str at 0x%llx is malformed or not compact",
			       (unsigned long long)obj);
	data = obj + (uint64_t)(((state >> L->u_state_ascii_shift) & 1) ?
				L->u_ascii_size : L->u_compact_size);
	n = (size_t)len < max_chars ? (size_t)len : max_chars;
	raw = xmalloc(n * kind + 1);
	ret = memsrc_read(py->ms, data, raw, n * kind, err);
	if (ret == 0) {
		for (i = 0; i < n; i++) {
			if (kind == 1)
				codepoints[i] = raw[i];
			else if (kind == 2)
				codepoints[i] = le_u16(raw + 2 * i);
			else
				codepoints[i] = le_u32(raw + 4 * i);
		}
		*ncodepoints = n;
		*length = (size_t)len;
	}
	free(raw);
	return ret;
}

/*
 * One character of a str kept as a C string, where nothing is lost or
 * made alike: an embedded NUL becomes C0 80 (the overlong form, which
 * no valid UTF-8 has: "modified UTF-8"), a lone surrogate (U+D800 -
 * U+DFFF: a file name's undecodable byte, under surrogateescape) its
 * three-byte form ED A0-BF 80-BF, which valid UTF-8 excludes too.  The
 * escapers (cli/escape.c, cli/json.c) write them back as \x00 and
 * \udcff; anything comparing names sees them differ from the rest.
 */
void pystr_add_codepoint(struct strbuf *sb, uint32_t c)
{
	char b[3];

	if (c == 0) {
		strbuf_add(sb, "\xc0\x80", 2);
	} else if (c >= 0xD800 && c <= 0xDFFF) {
		b[0] = (char)0xED;
		b[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		b[2] = (char)(0x80 | (c & 0x3F));
		strbuf_add(sb, b, 3);
	} else {
		strbuf_add_utf8(sb, c);
	}
}

int pystr_get(struct pyproc *py, uint64_t obj, const char **out,
	      struct cs_err *err)
{
	uint32_t *cps;
	size_t n, len, i;
	struct strbuf sb;
	int found, ret;
	char *cached;

	if (obj && obj == py->last_str) {
		*out = py->last_str_text;
		return 0;
	}
	cached = addrmap_get(&py->strs, obj, &found);
	if (found) {
		*out = cached;
		py->last_str = obj;
		py->last_str_text = cached;
		return 0;
	}
	cps = xmalloc(NAME_MAX_CHARS * sizeof(*cps));
	ret = pystr_decode(py, obj, NAME_MAX_CHARS, cps, &n, &len, err);
	if (ret < 0) {
		free(cps);
		return ret;
	}
	strbuf_init(&sb);
	for (i = 0; i < n; i++)
		pystr_add_codepoint(&sb, cps[i]);
	if (len > n)
		strbuf_addstr(&sb, "...");
	free(cps);
	cached = strbuf_detach(&sb);
	addrmap_put(&py->strs, obj, cached);
	*out = cached;
	py->last_str = obj;
	py->last_str_text = cached;
	return 0;
}

int pybytes_read(struct pyproc *py, uint64_t obj, void *buf, size_t max,
		 size_t *length, struct cs_err *err)
{
	uint64_t type, word;
	int64_t size;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	if (type != py->types.bytes && !pytype_is_subtype(py, type, py->types.bytes))
		return cs_fail(err, CS_ERR_MEMORY, "object at 0x%llx is not bytes",
			       (unsigned long long)obj);
	ret = py_field_u64(py, obj, py->layout.ob_size, &word, err);
	if (ret < 0)
		return ret;
	size = (int64_t)word;
	if (size < 0 || size > (1LL << 32))
		return cs_fail(err, CS_ERR_MEMORY,
			       "bytes at 0x%llx has a bad size %lld",
			       (unsigned long long)obj, (long long)size);
	*length = (size_t)size;
	if ((size_t)size < max)
		max = (size_t)size;
	return memsrc_read(py->ms, obj + (uint64_t)py->layout.bytes_sval, buf,
			   max, err);
}

/* The size word of an int: lv_tag (3.12+) or ob_size. */
static int int_size_at(const struct py_layout *L)
{
	return L->long_tag >= 0 ? L->long_tag : L->ob_size;
}

/* An int's sign and digit count from its size word. */
static int int_header_decode(const struct py_layout *L, uint64_t obj,
			     uint64_t word, int *sign, uint64_t *ndigits,
			     struct cs_err *err)
{
	if (L->long_tag >= 0) {
		/* 3.12+: lv_tag = ndigits << 3 | sign bits (0 +, 1 zero, 2 -) */
		*ndigits = word >> 3;
		*sign = (word & 3) == 0 ? 1 : (word & 3) == 1 ? 0 : -1;
		if ((word & 3) == 3)
			return cs_fail(err, CS_ERR_MEMORY, "int at 0x%llx is malformed",
				       (unsigned long long)obj);
	} else {
		int64_t size = (int64_t)word;

		*sign = size < 0 ? -1 : size > 0;
		/* negate in unsigned: INT64_MIN from garbage must not trap */
		*ndigits = size < 0 ? 0 - (uint64_t)size : (uint64_t)size;
	}
	if (*sign == 0)
		*ndigits = 0;
	return 0;
}

static int int_header(struct pyproc *py, uint64_t obj, int *sign,
		      uint64_t *ndigits, struct cs_err *err)
{
	uint64_t word;
	int ret;

	ret = py_field_u64(py, obj, int_size_at(&py->layout), &word, err);
	if (ret < 0)
		return ret;
	return int_header_decode(&py->layout, obj, word, sign, ndigits, err);
}

/* An int's n 30- (or 15-) bit digits, least significant first. */
static int read_digits(struct pyproc *py, uint64_t obj, uint32_t *d,
		       uint64_t n, struct cs_err *err)
{
	uint64_t i;
	int ret;

	/* Into the array's own bytes, then decoded in place. */
	ret = memsrc_read(py->ms, obj + (uint64_t)py->layout.long_digits, d,
			  n * 4, err);
	for (i = 0; ret == 0 && i < n; i++)
		d[i] = le_u32((const unsigned char *)&d[i]);
	return ret;
}

/*
 * An int of at most one digit (a task's number), from one read of its
 * size word and first digit: 1 done, 0 not (a longer int, or a read that
 * failed, which pyint_read_i64() then makes field by field).
 */
static int int_read_small(struct pyproc *py, uint64_t obj, int64_t *out)
{
	const struct py_layout *L = &py->layout;
	uint8_t buf[64];
	size_t at = (size_t)int_size_at(L), end = (size_t)L->long_digits + 4;
	uint64_t ndigits, mag;
	int sign;

	if (int_size_at(L) < 0 || L->long_digits < 0 || at + 8 > end ||
	    end > sizeof(buf) || L->long_digit_bits > 31 ||
	    memsrc_read(py->ms, obj, buf, end, NULL) < 0 ||
	    int_header_decode(L, obj, le_u64(buf + at), &sign, &ndigits,
			      NULL) < 0 || ndigits > 1)
		return 0;
	mag = ndigits ? le_u32(buf + end - 4) &
			((1u << L->long_digit_bits) - 1) : 0;
	*out = sign < 0 ? -(int64_t)mag : (int64_t)mag;
	return 1;
}

int pyint_read_i64(struct pyproc *py, uint64_t obj, int64_t *out,
		   struct cs_err *err)
{
	uint32_t digits[3];
	uint64_t ndigits, mag = 0;
	int sign, ret, bits = py->layout.long_digit_bits;
	uint64_t i;

	if (int_read_small(py, obj, out))
		return 0;
	ret = int_header(py, obj, &sign, &ndigits, err);
	if (ret < 0)
		return ret;
	if (ndigits > 3)
		return 1;
	ret = read_digits(py, obj, digits, ndigits, err);
	if (ret < 0)
		return ret;
	for (i = ndigits; i-- > 0;) {
		if (mag >> (63 - bits))
			return 1;
		mag = (mag << bits) | (digits[i] & ((1u << bits) - 1));
	}
	if (mag > (uint64_t)INT64_MAX)
		return 1;
	*out = sign < 0 ? -(int64_t)mag : (int64_t)mag;
	return 0;
}

int pyobj_int_i64(struct pyproc *py, uint64_t obj, int64_t *out,
		  struct cs_err *err)
{
	const struct py_types *T = &py->types;
	uint64_t type;
	int ret;

	/* An int (a bool, an IntEnum), not what a field may hold instead:
	 * a float's bits read as an int's are a number of nothing. */
	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	if (!T->int_ || (type != T->int_ && type != T->bool_ &&
			 !pytype_is_subtype(py, type, T->int_)))
		return cs_fail(err, CS_ERR_MEMORY, "0x%llx is not an int",
			       (unsigned long long)obj);
	return pyint_read_i64(py, obj, out, err);
}

int pyint_format(struct pyproc *py, uint64_t obj, struct strbuf *out,
		 struct cs_err *err)
{
	uint64_t ndigits, i;
	uint32_t *d, *dec;
	size_t ndec = 0, k;
	int sign, ret, bits = py->layout.long_digit_bits;

	ret = int_header(py, obj, &sign, &ndigits, err);
	if (ret < 0)
		return ret;
	if (ndigits == 0) {
		strbuf_addch(out, '0');
		return 0;
	}
	if (ndigits > INT_MAX_DIGITS || bits < 15 || bits > 30) {
		strbuf_addf(out, "<int of %llu bits>",
			    (unsigned long long)ndigits * (unsigned)bits);
		return 0;
	}
	d = xmalloc(ndigits * sizeof(*d));
	ret = read_digits(py, obj, d, ndigits, err);
	if (ret < 0) {
		free(d);
		return ret;
	}
	/* Schoolbook base conversion to 10^9 "limbs", least significant first. */
	dec = xmalloc((ndigits * 2 + 2) * sizeof(*dec));
	for (i = ndigits; i-- > 0;) {
		uint64_t carry = d[i] & ((1u << bits) - 1);

		for (k = 0; k < ndec; k++) {
			uint64_t z = ((uint64_t)dec[k] << bits) + carry;

			dec[k] = (uint32_t)(z % 1000000000u);
			carry = z / 1000000000u;
		}
		while (carry) {
			dec[ndec++] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
	}
	if (sign < 0)
		strbuf_addch(out, '-');
	if (ndec == 0)
		strbuf_addch(out, '0');
	for (k = ndec; k-- > 0;)
		strbuf_addf(out, k == ndec - 1 ? "%u" : "%09u", dec[k]);
	free(dec);
	free(d);
	return 0;
}

int pyfloat_read(struct pyproc *py, uint64_t obj, double *out,
		 struct cs_err *err)
{
	uint64_t bits;
	int ret;

	ret = py_field_u64(py, obj, py->layout.float_fval, &bits, err);
	if (ret < 0)
		return ret;
	memcpy(out, &bits, sizeof(*out));  /* an IEEE 754 binary64 */
	return 0;
}

void pyfloat_repr(double v, struct strbuf *out)
{
	char buf[64], digits[32];
	int prec, exp10 = 0, ndig = 0, decpt, i;
	char *e;

	if (isnan(v)) {
		strbuf_addstr(out, "nan");
		return;
	}
	if (isinf(v)) {
		strbuf_addstr(out, v < 0 ? "-inf" : "inf");
		return;
	}
	/* The shortest digit string that reads back as the same double, as
	 * Python's repr() picks it. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	e = strchr(buf, 'e');
	if (!e)
		CS_BUG("no exponent in '%s'", buf);
	exp10 = (int)strtol(e + 1, NULL, 10);
	for (i = 0; buf + i < e; i++)
		if (buf[i] >= '0' && buf[i] <= '9')
			digits[ndig++] = buf[i];
	while (ndig > 1 && digits[ndig - 1] == '0')
		ndig--;
	digits[ndig] = '\0';
	if (signbit(v))
		strbuf_addch(out, '-');
	decpt = exp10 + 1;
	if (v == 0)
		decpt = 1;
	if (decpt <= -4 || decpt > 16) {
		strbuf_addch(out, digits[0]);
		if (ndig > 1) {
			strbuf_addch(out, '.');
			strbuf_addstr(out, digits + 1);
		}
		strbuf_addf(out, "e%c%02d", exp10 < 0 ? '-' : '+',
			    exp10 < 0 ? -exp10 : exp10);
	} else if (decpt <= 0) {
		strbuf_addstr(out, "0.");
		for (i = 0; i < -decpt; i++)
			strbuf_addch(out, '0');
		strbuf_addstr(out, digits);
	} else if (decpt >= ndig) {
		strbuf_addstr(out, digits);
		for (i = ndig; i < decpt; i++)
			strbuf_addch(out, '0');
		strbuf_addstr(out, ".0");
	} else {
		strbuf_add(out, digits, (size_t)decpt);
		strbuf_addch(out, '.');
		strbuf_addstr(out, digits + decpt);
	}
}

/* A sequence's ob_size, checked, into *size; *max cut to it. */
static int var_size(struct pyproc *py, uint64_t obj, const char *what,
		    size_t *max, size_t *size, struct cs_err *err)
{
	uint64_t word;
	int ret;

	ret = py_field_u64(py, obj, py->layout.ob_size, &word, err);
	if (ret < 0)
		return ret;
	if ((int64_t)word < 0 || word > PY_MAX_CONTAINER)
		return cs_fail(err, CS_ERR_MEMORY,
			       "%s at 0x%llx has a bad size %lld", what,
			       (unsigned long long)obj, (long long)word);
	*size = (size_t)word;
	if (*size < *max)
		*max = *size;
	return 0;
}

int pyseq_items(struct pyproc *py, uint64_t obj, uint64_t *items,
		size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, base;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	ret = var_size(py, obj, "sequence", &max, size, err);
	if (ret < 0)
		return ret;
	if (type == py->types.tuple || pytype_is_subtype(py, type, py->types.tuple)) {
		base = obj + (uint64_t)L->tuple_items;
	} else if (type == py->types.list ||
		   pytype_is_subtype(py, type, py->types.list)) {
		ret = py_field_u64(py, obj, L->list_items, &base, err);
		if (ret < 0)
			return ret;
		if (!base && max)
			return cs_fail(err, CS_ERR_MEMORY,
				       "list at 0x%llx has no items array",
				       (unsigned long long)obj);
	} else {
		return cs_fail(err, CS_ERR_MEMORY,
			       "object at 0x%llx is not a tuple or list",
			       (unsigned long long)obj);
	}
	return max ? py_read_words(py, base, items, max, err) : 0;
}

int pydeque_items(struct pyproc *py, uint64_t obj, uint64_t *items,
		  size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t block, at;
	int64_t blocklen = (L->block_rightlink - L->block_data) / 8;
	size_t got = 0;
	int ret;

	if (L->deque_leftblock < 0 || L->deque_leftindex < 0 ||
	    L->block_data < 0 || blocklen <= 0)
		return cs_fail(err, CS_ERR_MEMORY, "no deque layout");
	ret = var_size(py, obj, "deque", &max, size, err);
	if (ret < 0 || !max)
		return ret;
	if ((ret = py_field_u64(py, obj, L->deque_leftblock, &block, err)) < 0 ||
	    (ret = py_field_u64(py, obj, L->deque_leftindex, &at, err)) < 0)
		return ret;
	/* Each pass reads the rest of one block: at most max / blocklen
	 * + 1 blocks for max items. */
	while (got < max) {
		size_t take = (size_t)blocklen - (size_t)at;

		if (!block || at >= (uint64_t)blocklen)
			return cs_fail(err, CS_ERR_MEMORY,
				       "deque at 0x%llx: its blocks end "
				       "after %zu of %zu items",
				       (unsigned long long)obj, got, max);
		if (take > max - got)
			take = max - got;
		ret = py_read_words(py, block + (uint64_t)L->block_data +
				    8 * at, items + got, take, err);
		if (ret < 0)
			return ret;
		got += take;
		if (got < max &&
		    (ret = py_field_u64(py, block, L->block_rightlink, &block,
					err)) < 0)
			return ret;
		at = 0;
	}
	return 0;
}

/* lst[lst_pos:] of a 3.7 - 3.12 SimpleQueue, at most max. */
static int simplequeue_list(struct pyproc *py, uint64_t obj, uint64_t *items,
			    size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t lst, pos, base, type;
	size_t len, n = max;
	int ret;

	if ((ret = py_field_u64(py, obj, L->sq_lst, &lst, err)) < 0 ||
	    (ret = py_field_u64(py, obj, L->sq_lst_pos, &pos, err)) < 0 ||
	    (ret = pyobj_read_type(py, lst, &type, err)) < 0)
		return ret;
	if (type != py->types.list)
		return cs_fail(err, CS_ERR_MEMORY, "SimpleQueue at 0x%llx "
			       "keeps no list", (unsigned long long)obj);
	if ((ret = var_size(py, lst, "SimpleQueue's list", &n, &len,
			    err)) < 0)
		return ret;
	if (pos > len)
		return cs_fail(err, CS_ERR_MEMORY, "SimpleQueue at 0x%llx: "
			       "position %llu past its %zu items",
			       (unsigned long long)obj,
			       (unsigned long long)pos, len);
	*size = len - (size_t)pos;
	n = *size < max ? *size : max;
	if (!n)
		return 0;
	if ((ret = py_field_u64(py, lst, L->list_items, &base, err)) < 0)
		return ret;
	return py_read_words(py, base + 8 * pos, items, n, err);
}

/* num_items from items[get_idx] of a 3.13+ SimpleQueue's ring, at most
 * max: two reads at most, the second from the ring's start. */
static int simplequeue_ring(struct pyproc *py, uint64_t obj, uint64_t *items,
			    size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t arr, at, cap, num;
	size_t n, first;
	int ret;

	if ((ret = py_field_u64(py, obj, L->sq_items, &arr, err)) < 0 ||
	    (ret = py_field_u64(py, obj, L->sq_get_idx, &at, err)) < 0 ||
	    (ret = py_field_u64(py, obj, L->sq_items_cap, &cap, err)) < 0 ||
	    (ret = py_field_u64(py, obj, L->sq_num_items, &num, err)) < 0)
		return ret;
	if (cap > PY_MAX_CONTAINER || num > cap || at >= cap ||
	    (num && !arr))
		return cs_fail(err, CS_ERR_MEMORY, "SimpleQueue at 0x%llx has "
			       "a bad ring (%llu of %llu from %llu)",
			       (unsigned long long)obj,
			       (unsigned long long)num,
			       (unsigned long long)cap, (unsigned long long)at);
	*size = (size_t)num;
	n = *size < max ? *size : max;
	first = (size_t)(cap - at) < n ? (size_t)(cap - at) : n;
	if (first &&
	    (ret = py_read_words(py, arr + 8 * at, items, first, err)) < 0)
		return ret;
	return n > first ? py_read_words(py, arr, items + first, n - first,
					 err) : 0;
}

int pysimplequeue_items(struct pyproc *py, uint64_t obj, uint64_t *items,
			size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;

	*size = 0;
	if (L->sq_lst >= 0 && L->sq_lst_pos >= 0)
		return simplequeue_list(py, obj, items, max, size, err);
	if (L->sq_items >= 0 && L->sq_get_idx >= 0 && L->sq_items_cap >= 0 &&
	    L->sq_num_items >= 0)
		return simplequeue_ring(py, obj, items, max, size, err);
	return cs_fail(err, CS_ERR_MEMORY, "no SimpleQueue layout");
}
