#include "readers/dicts.h"

#include <stdlib.h>
#include <string.h>

#include "common/le.h"
#include "readers/fields.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Entries read at a time when walking a dict's or set's table. */
#define WALK_CHUNK 256
/* PyModuleObject.md_dict: right after PyObject_HEAD in every version. */
/* Classes in an MRO we look through. */
#define MAX_MRO 64

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
			ret = py_read_words(py, values + (uint64_t)L->dv_values +
					    base * 8, vals, n, err);
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
	const char *k;

	if (pystr_get(s->py, key, &k, NULL) == 0 && !strcmp(k, s->name)) {
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

struct int_index {
	struct pyproc *py;
	struct addrmap *out;
};

static int index_int(uint64_t key, uint64_t value, void *data)
{
	struct int_index *s = data;
	uint64_t type;
	int64_t k;
	int found;

	if (pyobj_read_type(s->py, key, &type, NULL) == 0 &&
	    type == s->py->types.int_ &&
	    pyint_read_i64(s->py, key, &k, NULL) == 0 && k > 0) {
		(void)addrmap_get(s->out, (uint64_t)k, &found);
		if (!found)
			addrmap_put(s->out, (uint64_t)k,
				    (void *)(uintptr_t)value);
	}
	return 0;
}

int pydict_int_index(struct pyproc *py, uint64_t dict, struct addrmap *out,
		     struct cs_err *err)
{
	struct int_index s = { py, out };

	return dict_walk(py, dict, index_int, &s, err);
}

/*
 * Where obj's attributes are, from its type's fields (tp, tplen bytes of
 * it read): a dict (*dict) or, 3.11+, inline values (*values) whose keys
 * are the type's cached keys.  Both 0: none.
 */
static int instance_dict(struct pyproc *py, uint64_t obj, const uint8_t *tp,
			 size_t tplen, uint64_t *dict, uint64_t *values,
			 struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	/* the managed dict pointer (3.11+), before the object */
	uint64_t dict_slot = obj - (uint64_t)L->managed_dict_back;
	uint64_t flags = field_u64(tp, tplen, L->tp_flags), word;
	int64_t dictoffset = field_i64(tp, tplen, L->tp_dictoffset);
	int64_t basicsize = field_i64(tp, tplen, L->tp_basicsize);
	int managed = (flags & (uint64_t)L->tpflags_managed_dict) != 0;
	int ret = 0;

	*dict = *values = 0;
	switch (L->dict_mode) {
	case PY_DICT_OFFSET:
		if (dictoffset > 0 && dictoffset < 4096)
			ret = memsrc_read_u64(py->ms, obj + (uint64_t)dictoffset,
					      dict, err);
		return ret;
	case PY_DICT_VALUES_311:
		if (!managed)
			break;
		ret = memsrc_read_u64(py->ms, obj - 32, values, err);
		if (ret == 0 && !*values)
			ret = memsrc_read_u64(py->ms, dict_slot, dict, err);
		break;
	case PY_DICT_TAGGED_312:
		if (!managed)
			break;
		ret = memsrc_read_u64(py->ms, dict_slot, &word, err);
		/* The tagged word is the values pointer minus one. */
		if (ret == 0 && (word & 1))
			*values = word + 1;
		else if (ret == 0)
			*dict = word;
		break;
	case PY_DICT_INLINE_313:
		if (managed)
			ret = memsrc_read_u64(py->ms, dict_slot, dict, err);
		if (ret == 0 && !*dict &&
		    (flags & (uint64_t)L->tpflags_inline_values) &&
		    basicsize > 0 && basicsize < 65536)
			*values = obj + (uint64_t)basicsize;
		break;
	}
	if (ret < 0)
		return ret;
	/* A C type with its own dict slot (asyncio's FutureObj.dict) and
	 * its Python subclasses (gather's _GatheringFuture) keep the dict
	 * at tp_dictoffset in every version. */
	if (!*dict && !*values && !managed && dictoffset > 0 &&
	    dictoffset < 4096)
		ret = memsrc_read_u64(py->ms, obj + (uint64_t)dictoffset, dict,
				      err);
	return ret;
}

int pyobj_get_attr(struct pyproc *py, uint64_t obj, const char *name,
		   uint64_t *value, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t tp[PY_LAYOUT_MAX_STRUCT];
	struct str_lookup s = { py, name, 0, 0 };
	uint64_t type, dict, values, keys;
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
	keys = field_u64(tp, (size_t)ret, L->ht_cached_keys);
	ret = instance_dict(py, obj, tp, (size_t)ret, &dict, &values, err);
	if (ret < 0)
		return ret;
	if (dict)
		ret = dict_walk(py, dict, match_str, &s, err);
	else if (values && keys)
		ret = keys_walk(py, keys, values, match_str, &s, err);
	else
		return 1;
	if (ret < 0)
		return ret;
	*value = s.value;
	return s.found ? 0 : 1;
}

int pyobj_lookup(struct pyproc *py, uint64_t obj, const char *name,
		 uint64_t *value, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t type, mro, dict, items[MAX_MRO];
	size_t n, i;
	int ret;

	ret = pyobj_get_attr(py, obj, name, value, err);
	if (ret <= 0)
		return ret;
	ret = pyobj_read_type(py, obj, &type, err);
	if (ret == 0)
		ret = py_field_u64(py, type, L->tp_mro, &mro, err);
	if (ret < 0)
		return ret;
	if (!mro || pyseq_items(py, mro, items, MAX_MRO, &n, err) < 0)
		return 1;
	for (i = 0; i < n && i < MAX_MRO; i++) {
		if (py_field_u64(py, items[i], L->tp_dict, &dict, err) < 0 ||
		    !dict)
			continue;
		ret = pydict_get_str(py, dict, name, value, err);
		if (ret <= 0)
			return ret;
	}
	return 1;
}

uint64_t pyobj_lookup_or_0(struct pyproc *py, uint64_t obj, const char *name)
{
	uint64_t v;

	return pyobj_lookup(py, obj, name, &v, NULL) == 0 ? v : 0;
}

int pymodule_dict(struct pyproc *py, uint64_t interp, const char *name,
		  uint64_t *dict, struct cs_err *err)
{
	uint64_t modules, mod;
	int ret;

	ret = py_field_u64(py, interp, py->layout.is_modules, &modules, err);
	if (ret < 0)
		return ret;
	if (!modules)
		return 1;
	ret = pydict_get_str(py, modules, name, &mod, err);
	if (ret != 0)
		return ret;
	ret = py_field_u64(py, mod, py->layout.module_dict, dict, err);
	if (ret < 0)
		return ret;
	return *dict ? 0 : 1;
}

/*
 * A member descriptor (PyMemberDescrObject) holds its PyMemberDef
 * pointer after PyDescr_COMMON (object header, d_type, d_name,
 * d_qualname): 24 bytes past the header in 3.6 - 3.14, whose header
 * ends after ob_type (16 bytes; a free-threaded build's is longer).
 * The PyMemberDef starts with its name and holds the slot offset at 16.
 * Both are checked: the name read there must be the slot asked for.
 */
#define DESCR_MEMBER_PAST_HEADER 24
#define MEMBERDEF_OFFSET 16
#define MAX_SLOT_NAME 64
#define MAX_SLOT_OFFSET 4096

int pyobj_slot_offset(struct pyproc *py, uint64_t obj, const char *name,
		      int *off, struct cs_err *err)
{
	uint64_t descr, type, def, sname;
	char buf[MAX_SLOT_NAME];
	uint8_t md[24];
	int64_t v;
	long got;
	int ret;

	ret = pyobj_lookup(py, obj, name, &descr, err);
	if (ret < 0)
		return ret;
	if (ret > 0 || pyobj_read_type(py, descr, &type, err) < 0 ||
	    !py_type_name_cached(py, type) ||
	    strcmp(py_type_name_cached(py, type), "member_descriptor"))
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "the class has no slot '%s'", name);
	ret = memsrc_read_u64(py->ms, descr + (uint64_t)py->layout.ob_type +
			      8 + DESCR_MEMBER_PAST_HEADER, &def, err);
	if (ret < 0)
		return ret;
	ret = memsrc_read(py->ms, def, md, sizeof(md), err);
	if (ret < 0)
		return ret;
	sname = le_u64(md);
	got = memsrc_read_partial(py->ms, sname, buf, sizeof(buf), err);
	if (got <= 0 || !memchr(buf, '\0', (size_t)got) || strcmp(buf, name))
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "the '%s' slot's descriptor is not understood",
			       name);
	v = le_i64(md + MEMBERDEF_OFFSET);
	if (v < 16 || v >= MAX_SLOT_OFFSET || v % 8)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "the '%s' slot at %lld", name, (long long)v);
	*off = (int)v;
	return 0;
}

uint64_t pyobj_own_or_0(struct pyproc *py, uint64_t obj, const char *name)
{
	struct cs_err err;
	uint64_t v = 0;
	int off;

	cs_err_init(&err);
	if (!obj)
		return 0;
	if (pyobj_get_attr(py, obj, name, &v, &err) == 0)
		return v;
	cs_err_init(&err);
	if (pyobj_slot_offset(py, obj, name, &off, &err) < 0 ||
	    py_field_u64(py, obj, off, &v, &err) <= 0)
		return 0;
	return v;
}
