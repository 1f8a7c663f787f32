#include "readers/code.h"

#include <stdlib.h>
#include <string.h>

#include "readers/fields.h"
#include "readers/linetable.h"
#include "readers/objects.h"
#include "common/util.h"
#include "common/banned.h"

/* Bounds on what a sane code object holds. */
#define MAX_LINETABLE (1u << 24)
#define MAX_LOCALS 65536

static void code_free(struct py_code *code)
{
	if (!code)
		return;
	free(code->linetable);
	free(code->localnames);
	free(code->localkinds);
	free(code);
}

void code_cache_clear(struct pyproc *py)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (addrmap_next(&py->codes, &pos, &key, &val))
		code_free(val);
	addrmap_release(&py->codes);
	py->last_code = NULL;
	/* The addresses may hold other code objects once the target ran. */
	memset(py->line_memo, 0, sizeof(py->line_memo));
	memset(py->with_memo, 0, sizeof(py->with_memo));
	memset(py->setup_memo, 0, sizeof(py->setup_memo));
	memset(py->insn_memo, 0, sizeof(py->insn_memo));
}

/* Optional str member: NULL pointer gives "", unreadable is an error. */
static int member_str(struct pyproc *py, uint64_t obj, const char **out,
		      struct cs_err *err)
{
	if (!obj) {
		*out = "";
		return 0;
	}
	return pystr_get(py, obj, out, err);
}

static int read_linetable(struct pyproc *py, uint64_t bytes,
			  struct py_code *code, struct cs_err *err)
{
	size_t len;
	int ret;

	if (!bytes)
		return 0;
	/* First the length, then exactly that many bytes. */
	ret = pybytes_read(py, bytes, NULL, 0, &len, err);
	if (ret < 0)
		return ret;
	if (len > MAX_LINETABLE)
		return cs_fail(err, CS_ERR_MEMORY, "line table of %zu bytes", len);
	code->linetable = xmalloc(len ? len : 1);
	code->linetable_len = len;
	return pybytes_read(py, bytes, code->linetable, len, &len, err);
}

/* Append the names of one tuple (co_varnames, ...) with one kind. */
static int add_names(struct pyproc *py, uint64_t tuple, uint8_t kind,
		     struct py_code *code, size_t *alloc, struct cs_err *err)
{
	uint64_t *items;
	size_t n, i;
	int ret;

	if (!tuple)
		return 0;
	ret = pyseq_items(py, tuple, NULL, 0, &n, err);
	if (ret < 0)
		return ret;
	if (n > MAX_LOCALS || code->nlocalsplus + n > MAX_LOCALS)
		return cs_fail(err, CS_ERR_MEMORY, "code object with %zu locals", n);
	items = xmalloc((n ? n : 1) * sizeof(*items));
	ret = pyseq_items(py, tuple, items, n, &n, err);
	code->localnames = xgrow(code->localnames, alloc, code->nlocalsplus + n,
				 sizeof(*code->localnames));
	code->localkinds = xrealloc(code->localkinds, *alloc);
	for (i = 0; ret == 0 && i < n; i++) {
		ret = pystr_get(py, items[i], &code->localnames[code->nlocalsplus],
				err);
		code->localkinds[code->nlocalsplus++] = kind;
	}
	free(items);
	return ret;
}

static uint8_t local_kind(const struct py_layout *L, uint8_t bits)
{
	if (L->fast_hidden > 0 && (bits & L->fast_hidden))
		return PY_LOCAL_HIDDEN;
	if (bits & (L->fast_cell | L->fast_free))
		return PY_LOCAL_CELL;
	return PY_LOCAL_PLAIN;
}

static int read_locals(struct pyproc *py, const uint8_t *buf, size_t size,
		       struct py_code *code, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	size_t alloc = 0, i, nkinds;
	uint8_t kinds[MAX_LOCALS];
	int ret;

	if (L->co_localsplusnames < 0) {
		/* Before 3.11: varnames, then cells, then free variables. */
		ret = add_names(py, field_u64(buf, size, L->co_varnames),
				PY_LOCAL_PLAIN, code, &alloc, err);
		if (ret == 0)
			ret = add_names(py, field_u64(buf, size, L->co_cellvars),
					PY_LOCAL_CELL, code, &alloc, err);
		if (ret == 0)
			ret = add_names(py, field_u64(buf, size, L->co_freevars),
					PY_LOCAL_CELL, code, &alloc, err);
		return ret;
	}
	ret = add_names(py, field_u64(buf, size, L->co_localsplusnames),
			PY_LOCAL_PLAIN, code, &alloc, err);
	if (ret < 0)
		return ret;
	ret = pybytes_read(py, field_u64(buf, size, L->co_localspluskinds),
			   kinds, sizeof(kinds), &nkinds, err);
	if (ret < 0)
		return ret;
	if (nkinds != code->nlocalsplus)
		return cs_fail(err, CS_ERR_MEMORY,
			       "code object at 0x%llx: %zu local kinds for %zu names",
			       (unsigned long long)code->addr, nkinds,
			       code->nlocalsplus);
	for (i = 0; i < nkinds; i++)
		code->localkinds[i] = local_kind(L, kinds[i]);
	return 0;
}

static enum py_code_kind kind_of(const struct py_layout *L, int flags)
{
	if (flags & L->co_flags_coroutine)
		return PY_CODE_COROUTINE;
	if (flags & L->co_flags_async_generator)
		return PY_CODE_ASYNC_GENERATOR;
	if (flags & (L->co_flags_generator | L->co_flags_iterable_coroutine))
		return PY_CODE_GENERATOR;
	return PY_CODE_FUNCTION;
}

static int decode(struct pyproc *py, uint64_t addr, struct py_code *code,
		  struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint8_t buf[PY_LAYOUT_MAX_STRUCT];
	size_t size = (size_t)L->co_size;
	uint64_t type;
	int ret;

	if (size > sizeof(buf))
		CS_BUG("PyCodeObject of %zu bytes", size);
	ret = pyobj_read_type(py, addr, &type, err);
	if (ret < 0)
		return ret;
	if (type != py->types.code)
		return cs_fail(err, CS_ERR_MEMORY,
			       "object at 0x%llx is not a code object",
			       (unsigned long long)addr);
	ret = memsrc_read(py->ms, addr, buf, size, err);
	if (ret < 0)
		return ret;
	code->addr = addr;
	code->firstlineno = field_i32(buf, size, L->co_firstlineno);
	code->flags = field_i32(buf, size, L->co_flags);
	code->kind = kind_of(L, code->flags);
	code->firsttraceable = field_i32(buf, size, L->co_firsttraceable);
	if (L->co_code_adaptive >= 0) {
		code->code_start = addr + (uint64_t)L->co_code_adaptive;
		/* ob_size counts 2-byte code units */
		code->code_len = field_u64(buf, size, L->ob_size) * 2;
		code->tlbc = L->co_tlbc >= 0 ? field_u64(buf, size, L->co_tlbc) : 0;
	}
	code->bytecode = code->code_start;
	if (L->co_code >= 0 && field_u64(buf, size, L->co_code))
		code->bytecode = field_u64(buf, size, L->co_code) +
				 (uint64_t)L->bytes_sval;
	ret = member_str(py, field_u64(buf, size, L->co_name), &code->name, err);
	if (ret == 0)
		ret = member_str(py, field_u64(buf, size, L->co_filename),
				 &code->filename, err);
	if (ret == 0 && L->co_qualname >= 0)
		ret = member_str(py, field_u64(buf, size, L->co_qualname),
				 &code->qualname, err);
	else
		code->qualname = code->name;
	if (ret == 0)
		ret = read_linetable(py, field_u64(buf, size, L->co_linetable >= 0 ?
						   L->co_linetable : L->co_lnotab),
				     code, err);
	if (ret == 0)
		ret = read_locals(py, buf, size, code, err);
	return ret;
}

int py_code_get(struct pyproc *py, uint64_t addr, const struct py_code **out,
		struct cs_err *err)
{
	struct py_code *code;
	int ret;

	if (py->last_code && py->last_code->addr == addr && addr) {
		*out = py->last_code;
		return 0;
	}
	code = addrmap_get(&py->codes, addr, NULL);
	if (code) {
		*out = py->last_code = code;
		return 0;
	}
	if (!addr)
		return cs_fail(err, CS_ERR_MEMORY, "frame without a code object");
	code = xcalloc(1, sizeof(*code));
	ret = decode(py, addr, code, err);
	if (ret < 0) {
		code_free(code);
		return ret;
	}
	addrmap_put(&py->codes, addr, code);
	*out = py->last_code = code;
	return 0;
}

const struct py_code *py_code_cached(const struct pyproc *py, uint64_t addr)
{
	/* (Not remembered here: py is const to callers that only look.) */
	if (py->last_code && py->last_code->addr == addr && addr)
		return py->last_code;
	return addrmap_get(&py->codes, addr, NULL);
}

long py_code_offset(struct pyproc *py, const struct py_code *code,
		    uint64_t ip)
{
	uint64_t n, entries[PY_TLBC_MAX];
	size_t i;

	if (ip >= code->code_start && ip - code->code_start <= code->code_len)
		return (long)(ip - code->code_start);
	/* _PyCodeArray: {Py_ssize_t size; char *entries[size]}; entry 0 is
	 * co_code_adaptive itself.  The array grows as threads start, so it
	 * is read each time rather than cached with the code. */
	if (!code->tlbc || memsrc_read_u64(py->ms, code->tlbc, &n, NULL) < 0)
		return -1;
	if (n > PY_TLBC_MAX)
		n = PY_TLBC_MAX;
	if (py_read_words(py, code->tlbc + 8, entries, (size_t)n, NULL) < 0)
		return -1;
	for (i = 1; i < n; i++)
		if (entries[i] && ip >= entries[i] &&
		    ip - entries[i] <= code->code_len)
			return (long)(ip - entries[i]);
	return -1;
}

int py_code_line(struct pyproc *py, const struct py_code *code, long offset)
{
	struct py_line_memo *m =
		&py->line_memo[py_code_memo_slot(code->addr, offset,
						 PY_LINE_MEMO)];

	if (m->code != code->addr || m->offset != offset) {
		m->code = code->addr;
		m->offset = offset;
		m->line = linetable_line_at(py->layout.linetable,
					    code->linetable,
					    code->linetable_len,
					    code->firstlineno, offset);
	}
	return m->line;
}

int py_code_is(const struct py_code *code, const char *file,
	       const char *name)
{
	return code && code->name && code->filename &&
	       !strcmp(code->name, name) && cs_ends_with(code->filename, file);
}
