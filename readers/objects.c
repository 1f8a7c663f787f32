#include "readers/objects.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "common/banned.h"

/* Entries read at a time when walking a dict's or set's table. */
#define WALK_CHUNK 256

/* PyModuleObject.md_dict: right after PyObject_HEAD in every version. */
#define MODULE_DICT_OFFSET 16
/* Longest str kept in the name cache, in code points. */
#define NAME_MAX_CHARS 4096
/* Ints longer than this many digits are summarised, not converted. */
#define INT_MAX_DIGITS 500
/* tp_base chains are short; anything longer is a cycle or garbage. */
#define MAX_TYPE_DEPTH 64

int pyobj_read_type(struct pyproc *py, uint64_t obj, uint64_t *type,
		    struct cs_err *err)
{
	if (!obj)
		return cs_fail(err, CS_ERR_MEMORY, "null object pointer");
	return memsrc_read_u64(py->ms, obj + (uint64_t)py->layout.ob_type,
			       type, err);
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

	ret = memsrc_read_u64(py->ms, type + (uint64_t)py->layout.tp_name,
			      &name, err);
	if (ret < 0)
		return ret;
	return read_cstring(py, name, 200, out, err);
}

int pytype_is_subtype(struct pyproc *py, uint64_t type, uint64_t base)
{
	struct cs_err ignored;
	int depth;

	cs_err_init(&ignored);
	for (depth = 0; type && depth < MAX_TYPE_DEPTH; depth++) {
		if (type == base)
			return 1;
		if (memsrc_read_u64(py->ms, type + (uint64_t)py->layout.tp_base,
				    &type, &ignored) < 0)
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
	if (len < 0 || len > (int64_t)PY_MAX_STR_CHARS ||
	    (kind != 1 && kind != 2 && kind != 4) ||
	    !((state >> L->u_state_compact_shift) & 1))
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
				codepoints[i] = (uint32_t)raw[2 * i] |
						(uint32_t)raw[2 * i + 1] << 8;
			else
				memcpy(&codepoints[i], raw + 4 * i, 4);
		}
		*ncodepoints = n;
		*length = (size_t)len;
	}
	free(raw);
	return ret;
}

int pystr_get(struct pyproc *py, uint64_t obj, const char **out,
	      struct cs_err *err)
{
	uint32_t *cps;
	size_t n, len, i;
	struct strbuf sb;
	int found, ret;
	char *cached = addrmap_get(&py->strs, obj, &found);

	if (found) {
		*out = cached;
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
		strbuf_add_utf8(&sb, cps[i]);
	if (len > n)
		strbuf_addstr(&sb, "...");
	free(cps);
	cached = strbuf_detach(&sb);
	addrmap_put(&py->strs, obj, cached);
	*out = cached;
	return 0;
}

int pybytes_read(struct pyproc *py, uint64_t obj, void *buf, size_t max,
		 size_t *length, struct cs_err *err)
{
	uint64_t type;
	int64_t size;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	if (type != py->types.bytes && !pytype_is_subtype(py, type, py->types.bytes))
		return cs_fail(err, CS_ERR_MEMORY, "object at 0x%llx is not bytes",
			       (unsigned long long)obj);
	ret = memsrc_read(py->ms, obj + (uint64_t)py->layout.ob_size, &size,
			  sizeof(size), err);
	if (ret < 0)
		return ret;
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

/* An int's sign (-1, 0, 1) and digit count, from either header form. */
static int int_header(struct pyproc *py, uint64_t obj, int *sign,
		      uint64_t *ndigits, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t word;
	int ret;

	if (L->long_tag >= 0) {
		/* 3.12+: lv_tag = ndigits << 3 | sign bits (0 +, 1 zero, 2 -) */
		ret = memsrc_read_u64(py->ms, obj + (uint64_t)L->long_tag, &word, err);
		if (ret < 0)
			return ret;
		*ndigits = word >> 3;
		*sign = (word & 3) == 0 ? 1 : (word & 3) == 1 ? 0 : -1;
		if ((word & 3) == 3)
			return cs_fail(err, CS_ERR_MEMORY, "int at 0x%llx is malformed",
				       (unsigned long long)obj);
	} else {
		int64_t size;

		ret = memsrc_read_u64(py->ms, obj + (uint64_t)L->ob_size, &word, err);
		if (ret < 0)
			return ret;
		size = (int64_t)word;
		*sign = size < 0 ? -1 : size > 0;
		/* negate in unsigned: INT64_MIN from garbage must not trap */
		*ndigits = size < 0 ? 0 - (uint64_t)size : (uint64_t)size;
	}
	if (*sign == 0)
		*ndigits = 0;
	return 0;
}

int pyint_read_i64(struct pyproc *py, uint64_t obj, int64_t *out,
		   struct cs_err *err)
{
	uint32_t digits[3];
	uint64_t ndigits, mag = 0;
	int sign, ret, bits = py->layout.long_digit_bits;
	uint64_t i;

	ret = int_header(py, obj, &sign, &ndigits, err);
	if (ret < 0)
		return ret;
	if (ndigits > 3)
		return 1;
	ret = memsrc_read(py->ms, obj + (uint64_t)py->layout.long_digits, digits,
			  ndigits * 4, err);
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
	ret = memsrc_read(py->ms, obj + (uint64_t)py->layout.long_digits, d,
			  ndigits * 4, err);
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
	return memsrc_read(py->ms, obj + (uint64_t)py->layout.float_fval, out,
			   sizeof(*out), err);
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

int pyseq_items(struct pyproc *py, uint64_t obj, uint64_t *items,
		size_t max, size_t *size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, base;
	int64_t n;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	ret = memsrc_read(py->ms, obj + (uint64_t)L->ob_size, &n, sizeof(n), err);
	if (ret < 0)
		return ret;
	if (n < 0 || n > (int64_t)PY_MAX_CONTAINER)
		return cs_fail(err, CS_ERR_MEMORY,
			       "sequence at 0x%llx has a bad size %lld",
			       (unsigned long long)obj, (long long)n);
	*size = (size_t)n;
	if ((size_t)n < max)
		max = (size_t)n;
	if (type == py->types.tuple || pytype_is_subtype(py, type, py->types.tuple)) {
		base = obj + (uint64_t)L->tuple_items;
	} else if (type == py->types.list ||
		   pytype_is_subtype(py, type, py->types.list)) {
		ret = memsrc_read_u64(py->ms, obj + (uint64_t)L->list_items,
				      &base, err);
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
	return max ? memsrc_read(py->ms, base, items, max * 8, err) : 0;
}

/*
 * The entries of a dict keys object, with values taken from `values`
 * (a split table's PyDictValues, or 0 for a combined table).  Calls
 * visit(key, value) for every live entry in order until it returns
 * non-zero.
 */
typedef int (*entry_visitor)(uint64_t key, uint64_t value, void *data);

static int keys_walk(struct pyproc *py, uint64_t keys, uint64_t values,
		     entry_visitor visit, void *data, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t hdr[PY_LAYOUT_MAX_STRUCT];
	uint64_t entries, size, nentries, i, index_bytes, base;
	int stop = 0;
	size_t esize, koff, voff;
	uint8_t *table = NULL;
	uint64_t *vals = NULL;
	int ret;

	if ((size_t)L->dk_indices > sizeof(hdr))
		CS_BUG("dict keys header larger than %zu", sizeof(hdr));
	ret = memsrc_read(py->ms, keys, hdr, (size_t)L->dk_indices, err);
	if (ret < 0)
		return ret;
	if (L->dk_size >= 0) {
		/* 3.6 - 3.10: the index width follows from the table size. */
		size = field_u64(hdr, sizeof(hdr), L->dk_size);
		index_bytes = size <= 0xff ? 1 : size <= 0xffff ? 2 :
			      size <= 0xffffffffu ? 4 : 8;
		index_bytes *= size;
		esize = (size_t)L->dk_entry_size;
		koff = 8, voff = 16;
	} else {
		uint8_t log2 = field_u8(hdr, sizeof(hdr), L->dk_log2_size);
		uint8_t log2ix = field_u8(hdr, sizeof(hdr), L->dk_log2_index_bytes);
		uint8_t kind = field_u8(hdr, sizeof(hdr), L->dk_kind);

		if (log2 > 40 || log2ix > 43)
			return cs_fail(err, CS_ERR_MEMORY,
				       "dict keys at 0x%llx are malformed",
				       (unsigned long long)keys);
		size = 1ull << log2;
		index_bytes = 1ull << log2ix;
		if (kind == 0) {
			esize = (size_t)L->dk_entry_size;
			koff = 8, voff = 16;
		} else {
			esize = (size_t)L->dk_unicode_entry_size;
			koff = 0, voff = 8;
		}
	}
	nentries = field_u64(hdr, sizeof(hdr), L->dk_nentries);
	if (size == 0 || (size & (size - 1)) || size > PY_MAX_CONTAINER * 2ull ||
	    nentries > size || esize < 16 || esize > 64)
		return cs_fail(err, CS_ERR_MEMORY,
			       "dict keys at 0x%llx are malformed",
			       (unsigned long long)keys);
	if (nentries == 0)
		return 0;
	entries = keys + (uint64_t)L->dk_indices + index_bytes;
	/* In chunks: a visitor that wants 8 items of a million-entry dict
	 * stops after the first chunk. */
	table = xmalloc(WALK_CHUNK * esize);
	if (values)
		vals = xmalloc(WALK_CHUNK * 8);
	for (base = 0; ret == 0 && !stop && base < nentries; base += WALK_CHUNK) {
		uint64_t n = nentries - base < WALK_CHUNK ? nentries - base : WALK_CHUNK;

		ret = memsrc_read(py->ms, entries + base * esize, table, n * esize,
				  err);
		if (ret == 0 && values)
			ret = memsrc_read(py->ms, values + (uint64_t)L->dv_values +
					  base * 8, vals, n * 8, err);
		for (i = 0; ret == 0 && i < n; i++) {
			uint64_t k = field_u64(table + i * esize, esize, (int)koff);
			uint64_t v = vals ? vals[i] :
					    field_u64(table + i * esize, esize,
						      (int)voff);

			if (k && v && visit(k, v, data)) {
				stop = 1;
				break;
			}
		}
	}
	free(vals);
	free(table);
	return ret;
}

struct collect {
	struct pydict_entry *out;
	size_t max, n;
};

static int collect_entry(uint64_t key, uint64_t value, void *data)
{
	struct collect *c = data;

	if (c->n < c->max) {
		c->out[c->n].key = key;
		c->out[c->n].value = value;
	}
	c->n++;
	return c->n >= c->max;  /* the count comes from ma_used */
}

int pydict_entries(struct pyproc *py, uint64_t dict,
		   struct pydict_entry *out, size_t max, size_t *used,
		   struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t hdr[PY_LAYOUT_MAX_STRUCT];
	struct collect c = { out, max, 0 };
	uint64_t keys, values;
	int64_t nused;
	int ret;

	ret = memsrc_read(py->ms, dict, hdr, (size_t)L->dict_values + 8, err);
	if (ret < 0)
		return ret;
	nused = field_i64(hdr, sizeof(hdr), L->dict_used);
	keys = field_u64(hdr, sizeof(hdr), L->dict_keys);
	values = field_u64(hdr, sizeof(hdr), L->dict_values);
	if (nused < 0 || nused > (int64_t)PY_MAX_CONTAINER || !keys)
		return cs_fail(err, CS_ERR_MEMORY, "dict at 0x%llx is malformed",
			       (unsigned long long)dict);
	*used = (size_t)nused;
	if (nused == 0)
		return 0;
	return keys_walk(py, keys, values, collect_entry, &c, err);
}

int pyset_entries(struct pyproc *py, uint64_t set, struct pydict_entry *out,
		  size_t max, size_t *used, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t hdr[PY_LAYOUT_MAX_STRUCT];
	uint8_t *table;
	int64_t nused, mask;
	uint64_t tab, i, base;
	size_t n = 0, esize = (size_t)L->set_entry_size;
	int ret;

	ret = memsrc_read(py->ms, set, hdr, (size_t)L->set_table + 8, err);
	if (ret < 0)
		return ret;
	nused = field_i64(hdr, sizeof(hdr), L->set_used);
	mask = field_i64(hdr, sizeof(hdr), L->set_mask);
	tab = field_u64(hdr, sizeof(hdr), L->set_table);
	if (nused < 0 || mask < 0 || mask > (int64_t)PY_MAX_CONTAINER * 4 ||
	    ((mask + 1) & mask) || nused > mask + 1 || !tab || esize < 16)
		return cs_fail(err, CS_ERR_MEMORY, "set at 0x%llx is malformed",
			       (unsigned long long)set);
	*used = (size_t)nused;
	if (nused == 0 || max == 0)
		return 0;
	/* In chunks, stopping once max entries are found. */
	table = xmalloc(WALK_CHUNK * esize);
	for (base = 0; ret == 0 && base <= (uint64_t)mask && n < max;
	     base += WALK_CHUNK) {
		uint64_t cnt = (uint64_t)mask + 1 - base < WALK_CHUNK ?
			       (uint64_t)mask + 1 - base : WALK_CHUNK;

		ret = memsrc_read(py->ms, tab + base * esize, table, cnt * esize,
				  err);
		for (i = 0; ret == 0 && i < cnt && n < max; i++) {
			uint64_t key = field_u64(table + i * esize, esize, 0);
			int64_t hash = field_i64(table + i * esize, esize, 8);

			/* Empty slots hold NULL; deleted ones the dummy key
			 * with hash -1, which no real key can have. */
			if (key && hash != -1) {
				out[n].key = key;
				out[n].value = 0;
				n++;
			}
		}
	}
	free(table);
	return ret;
}

struct str_lookup {
	struct pyproc *py;
	const char *name;
	uint64_t value;
	int found;
};

static int match_str(uint64_t key, uint64_t value, void *data)
{
	struct str_lookup *s = data;
	struct cs_err ignored;
	const char *k;

	cs_err_init(&ignored);
	if (pystr_get(s->py, key, &k, &ignored) == 0 && !strcmp(k, s->name)) {
		s->value = value;
		s->found = 1;
		return 1;
	}
	return 0;
}

struct int_lookup {
	struct pyproc *py;
	int64_t key;
	uint64_t value;
	int found;
};

static int match_int(uint64_t key, uint64_t value, void *data)
{
	struct int_lookup *s = data;
	struct cs_err ignored;
	uint64_t type;
	int64_t k;

	cs_err_init(&ignored);
	if (pyobj_read_type(s->py, key, &type, &ignored) == 0 &&
	    type == s->py->types.int_ &&
	    pyint_read_i64(s->py, key, &k, &ignored) == 0 && k == s->key) {
		s->value = value;
		s->found = 1;
		return 1;
	}
	return 0;
}

static int dict_walk(struct pyproc *py, uint64_t dict, entry_visitor visit,
		     void *data, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t hdr[PY_LAYOUT_MAX_STRUCT];
	uint64_t keys;
	int ret;

	ret = memsrc_read(py->ms, dict, hdr, (size_t)L->dict_values + 8, err);
	if (ret < 0)
		return ret;
	keys = field_u64(hdr, sizeof(hdr), L->dict_keys);
	if (!keys)
		return cs_fail(err, CS_ERR_MEMORY, "dict at 0x%llx is malformed",
			       (unsigned long long)dict);
	return keys_walk(py, keys, field_u64(hdr, sizeof(hdr), L->dict_values),
			 visit, data, err);
}

int pydict_get_str(struct pyproc *py, uint64_t dict, const char *key,
		   uint64_t *value, struct cs_err *err)
{
	struct str_lookup s = { py, key, 0, 0 };
	int ret = dict_walk(py, dict, match_str, &s, err);

	if (ret < 0)
		return ret;
	*value = s.value;
	return s.found ? 0 : 1;
}

int pydict_get_int(struct pyproc *py, uint64_t dict, int64_t key,
		   uint64_t *value, struct cs_err *err)
{
	struct int_lookup s = { py, key, 0, 0 };
	int ret = dict_walk(py, dict, match_int, &s, err);

	if (ret < 0)
		return ret;
	*value = s.value;
	return s.found ? 0 : 1;
}

int pyobj_get_attr(struct pyproc *py, uint64_t obj, const char *name,
		   uint64_t *value, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t tp[PY_LAYOUT_MAX_STRUCT];
	struct str_lookup s = { py, name, 0, 0 };
	uint64_t type, dict = 0, values = 0, word, flags, keys;
	int64_t dictoffset, basicsize;
	int ret;

	ret = pyobj_read_type(py, obj, &type, err);
	if (ret < 0)
		return ret;
	if ((size_t)L->ht_cached_keys + 8 > sizeof(tp))
		CS_BUG("heap type larger than %zu", sizeof(tp));
	/* Static types are shorter than heap types: read what exists. */
	ret = (int)memsrc_read_partial(py->ms, type, tp,
				       (size_t)L->ht_cached_keys + 8, err);
	if (ret < 0)
		return ret;
	if (ret < L->tp_dictoffset + 8)
		return cs_fail(err, CS_ERR_MEMORY, "cannot read type at 0x%llx",
			       (unsigned long long)type);
	flags = field_u64(tp, (size_t)ret, L->tp_flags);
	dictoffset = field_i64(tp, (size_t)ret, L->tp_dictoffset);
	basicsize = field_i64(tp, (size_t)ret, L->tp_basicsize);
	keys = field_u64(tp, (size_t)ret, L->ht_cached_keys);

	switch (L->dict_mode) {
	case PY_DICT_OFFSET:
		if (dictoffset > 0 && dictoffset < 4096) {
			ret = memsrc_read_u64(py->ms, obj + (uint64_t)dictoffset,
					      &dict, err);
			if (ret < 0)
				return ret;
		}
		break;
	case PY_DICT_VALUES_311:
		if (!(flags & (uint64_t)L->tpflags_managed_dict))
			break;
		ret = memsrc_read_u64(py->ms, obj - 32, &values, err);
		if (ret == 0 && !values)
			ret = memsrc_read_u64(py->ms, obj - 24, &dict, err);
		if (ret < 0)
			return ret;
		break;
	case PY_DICT_TAGGED_312:
		if (!(flags & (uint64_t)L->tpflags_managed_dict))
			break;
		ret = memsrc_read_u64(py->ms, obj - 24, &word, err);
		if (ret < 0)
			return ret;
		/* The tagged word is the values pointer minus one. */
		if (word & 1)
			values = word + 1;
		else
			dict = word;
		break;
	case PY_DICT_INLINE_313:
		if (flags & (uint64_t)L->tpflags_managed_dict) {
			ret = memsrc_read_u64(py->ms, obj - 24, &dict, err);
			if (ret < 0)
				return ret;
		}
		if (!dict && (flags & (uint64_t)L->tpflags_inline_values) &&
		    basicsize > 0 && basicsize < 65536)
			values = obj + (uint64_t)basicsize;
		break;
	}
	if (dict) {
		ret = dict_walk(py, dict, match_str, &s, err);
	} else if (values && keys) {
		ret = keys_walk(py, keys, values, match_str, &s, err);
	} else {
		return 1;
	}
	if (ret < 0)
		return ret;
	*value = s.value;
	return s.found ? 0 : 1;
}

int pyobj_lookup(struct pyproc *py, uint64_t obj, const char *name,
		 uint64_t *value, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, mro, dict, items[MAX_TYPE_DEPTH];
	size_t n, i;
	int ret;

	ret = pyobj_get_attr(py, obj, name, value, err);
	if (ret <= 0)
		return ret;
	ret = pyobj_read_type(py, obj, &type, err);
	if (ret == 0)
		ret = memsrc_read_u64(py->ms, type + (uint64_t)L->tp_mro, &mro, err);
	if (ret < 0)
		return ret;
	if (!mro || pyseq_items(py, mro, items, MAX_TYPE_DEPTH, &n, err) < 0)
		return 1;
	for (i = 0; i < n && i < MAX_TYPE_DEPTH; i++) {
		if (memsrc_read_u64(py->ms, items[i] + (uint64_t)L->tp_dict, &dict,
				    err) < 0 || !dict)
			continue;
		ret = pydict_get_str(py, dict, name, value, err);
		if (ret <= 0)
			return ret;
	}
	return 1;
}

uint64_t pyobj_lookup_or_0(struct pyproc *py, uint64_t obj, const char *name)
{
	struct cs_err err;
	uint64_t v;

	cs_err_init(&err);
	return pyobj_lookup(py, obj, name, &v, &err) == 0 ? v : 0;
}

int pymodule_dict(struct pyproc *py, uint64_t interp, const char *name,
		  uint64_t *dict, struct cs_err *err)
{
	uint64_t modules, mod;
	int ret;

	ret = memsrc_read_u64(py->ms, interp + (uint64_t)py->layout.is_modules,
			      &modules, err);
	if (ret < 0)
		return ret;
	if (!modules)
		return 1;
	ret = pydict_get_str(py, modules, name, &mod, err);
	if (ret != 0)
		return ret;
	ret = memsrc_read_u64(py->ms, mod + MODULE_DICT_OFFSET, dict, err);
	if (ret < 0)
		return ret;
	return *dict ? 0 : 1;
}
