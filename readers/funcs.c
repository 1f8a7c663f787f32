#include "readers/funcs.h"

#include <string.h>

#include "common/le.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Bytes of a PyFunctionObject searched for its code object. */
#define FUNC_PROBE_BYTES 128

const struct py_code *py_function_code(struct pyproc *py, uint64_t func)
{
	uint8_t buf[FUNC_PROBE_BYTES];
	const struct py_code *code;
	uint64_t type;
	size_t off;

	if (!func || pyobj_read_type(py, func, &type, NULL) < 0)
		return NULL;
	/* Only a function: other callables have no code pointer to find. */
	if (strcmp(py_type_name_cached(py, type), "function"))
		return NULL;
	if (memsrc_read(py->ms, func, buf, sizeof(buf), NULL) < 0)
		return NULL;
	/* A PyFunctionObject points to exactly one code object (func_code);
	 * where depends on the version, so find the pointer whose target is
	 * a code object rather than keep one more offset per version. */
	for (off = 16; off + 8 <= sizeof(buf); off += 8) {
		uint64_t v = le_u64(buf + off), t;

		if (!v || v & 7 || pyobj_read_type(py, v, &t, NULL) < 0 ||
		    t != py->types.code)
			continue;
		return py_code_get(py, v, &code, NULL) < 0 ? NULL : code;
	}
	return NULL;
}

int py_bound_method(struct pyproc *py, uint64_t method, uint64_t *func,
		    uint64_t *self)
{
	int off = py->layout.method_self;

	if (off < 8 || py_field_u64(py, method, off - 8, func, NULL) < 0 ||
	    py_field_u64(py, method, off, self, NULL) < 0)
		return -1;
	return 0;
}

const char *py_function_qualname(struct pyproc *py, uint64_t func)
{
	const struct py_code *code = py_function_code(py, func);

	return code ? code->qualname : NULL;
}

uint64_t py_module_attr(struct pyproc *py, const char *mod, const char *name)
{
	uint64_t interp, dict, v;

	if (pyproc_interp_head(py, &interp, NULL) < 0 || !interp ||
	    pymodule_dict(py, interp, mod, &dict, NULL) != 0 ||
	    pydict_get_str(py, dict, name, &v, NULL) != 0)
		return 0;
	return v;
}

int py_cfunction_name(struct pyproc *py, uint64_t fn, char *buf, size_t size,
		      struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t ml, sname;

	memset(buf, 0, size);
	if (size < 2 || L->cfunction_self < 8 ||
	    py_field_u64(py, fn, L->cfunction_self - 8, &ml, err) < 0 ||
	    !ml || py_field_u64(py, ml, 0, &sname, err) < 0 || !sname ||
	    memsrc_read_partial(py->ms, sname, buf, size - 1, err) <= 0)
		return -1;
	return 0;
}

int py_method_descr_name(struct pyproc *py, uint64_t descr, char *buf,
			 size_t size, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t def, sname;

	memset(buf, 0, size);
	if (size < 2 || L->descr_method < 0 ||
	    py_field_u64(py, descr, L->descr_method, &def, err) < 0 ||
	    !def || py_field_u64(py, def, 0, &sname, err) < 0 || !sname ||
	    memsrc_read_partial(py->ms, sname, buf, size - 1, err) <= 0)
		return -1;
	return 0;
}
