#include "readers/pyproc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "readers/code.h"
#include "readers/debug_offsets.h"
#include "readers/fields.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Symbols that only a CPython interpreter defines, in the order we trust
 * them to find the module that holds it. */
static const char *const interpreter_symbols[] = {
	"_PyRuntime",              /* 3.7+ */
	"_PyThreadState_Current",  /* 3.6 (and 2.7, to name it unsupported) */
	"Py_Initialize",
	"Py_GetVersion",
};

static int parse_version(const char *s, int *major, int *minor, int *micro)
{
	char *end;
	long v[3] = { 0, 0, 0 };
	int i;

	/* "M.m" is enough; the micro version is optional. */
	for (i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*s)) {
			if (i < 2)
				return -1;
			break;
		}
		v[i] = strtol(s, &end, 10);
		if (v[i] > 99)
			return -1;
		s = end;
		if (i < 2 && *s != '.') {
			if (i == 0)
				return -1;
			break;
		}
		if (i < 2)
			s++;
	}
	*major = (int)v[0];
	*minor = (int)v[1];
	*micro = (int)v[2];
	return 0;
}

/* "libpython3.9.so.1.0", "python3.8", "libpython2.7.so" -> 3, 9 */
static int version_from_name(const char *path, int *major, int *minor)
{
	const char *base = strrchr(path, '/');
	const char *p;
	int micro;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (!p)
		return -1;
	p += strlen("python");
	if (parse_version(p, major, minor, &micro) < 0)
		return -1;
	return 0;
}

/*
 * Find PY_VERSION ("3.9.18") among the NUL-terminated strings of the
 * module's read-only data: the fallback for builds without Py_Version
 * (before 3.11).  With a known major.minor only strings starting with it
 * count, so unrelated version strings of bundled libraries are skipped.
 */
static int version_from_rodata(const struct elf_image *img, int major,
			       int minor, char *out, size_t outlen)
{
	uint64_t addr, size, off;
	char prefix[16], chunk[65536 + 32];
	size_t plen;

	if (elf_image_section(img, ".rodata", &addr, &size) < 0)
		return -1;
	if (major)
		snprintf(prefix, sizeof(prefix), "%d.%d.", major, minor);
	else
		prefix[0] = '\0';
	plen = strlen(prefix);
	for (off = 0; off < size && off < (64u << 20); off += 65536) {
		size_t n = size - off < sizeof(chunk) ? size - off : sizeof(chunk);
		size_t i;

		if (elf_image_read_vaddr(img, addr + off, chunk, n) < 0)
			return -1;
		for (i = 1; i + 6 < n; i++) {
			size_t j;
			int a, b, c;

			if (chunk[i - 1] != '\0' || !isdigit((unsigned char)chunk[i]))
				continue;
			if (plen && strncmp(chunk + i, prefix, plen))
				continue;
			for (j = i; j < n && j - i < 16 && chunk[j]; j++)
				if (!isalnum((unsigned char)chunk[j]) && chunk[j] != '.' &&
				    chunk[j] != '+')
					break;
			if (j >= n || chunk[j] != '\0' || j - i < 5 || j - i >= outlen)
				continue;
			if (parse_version(chunk + i, &a, &b, &c) < 0 || a < 2 || a > 3)
				continue;
			memcpy(out, chunk + i, j - i);
			out[j - i] = '\0';
			return 0;
		}
	}
	return -1;
}

static void format_hex_version(uint64_t hex, char *out, size_t len,
			       int *major, int *minor, int *micro)
{
	static const char level_char[16] = {
		[0xA] = 'a', [0xB] = 'b', [0xC] = 'c',
	};
	unsigned level = (hex >> 4) & 0xf, serial = hex & 0xf;

	*major = (int)((hex >> 24) & 0xff);
	*minor = (int)((hex >> 16) & 0xff);
	*micro = (int)((hex >> 8) & 0xff);
	if (level == 0xF || !level_char[level])
		snprintf(out, len, "%d.%d.%d", *major, *minor, *micro);
	else if (level == 0xC)
		snprintf(out, len, "%d.%d.%drc%u", *major, *minor, *micro, serial);
	else
		snprintf(out, len, "%d.%d.%d%c%u", *major, *minor, *micro,
			 level_char[level], serial);
}

/* 1 when the exact version is known, 0 when only major.minor, or an
 * error. */
static int find_version(struct pyproc *py, struct cs_err *err)
{
	const struct module *mod = py->pymod;
	struct elf_image *img = module_image(mod);
	uint64_t vaddr, size, hex = 0;

	if (img && elf_image_symbol(img, "Py_Version", &vaddr, &size) == 0 &&
	    elf_image_read_vaddr(img, vaddr, &hex, sizeof(hex)) == 0 && hex) {
		format_hex_version(hex, py->version, sizeof(py->version),
				   &py->major, &py->minor, &py->micro);
		return 1;
	}
	if (version_from_name(mod->path, &py->major, &py->minor) < 0) {
		const struct module *exe = NULL;
		size_t i;

		for (i = 0; i < py->mods.n; i++)
			if (py->mods.mods[i].is_main)
				exe = &py->mods.mods[i];
		if (exe)
			version_from_name(exe->path, &py->major, &py->minor);
	}
	if (img && version_from_rodata(img, py->major, py->minor,
				       py->version, sizeof(py->version)) == 0 &&
	    parse_version(py->version, &py->major, &py->minor, &py->micro) == 0)
		return 1;
	if (py->major) {
		snprintf(py->version, sizeof(py->version), "%d.%d", py->major,
			 py->minor);
		return 0;
	}
	return cs_fail(err, CS_ERR_UNSUPPORTED,
		       "unrecognised Python version in '%s'", mod->path);
}

static uint64_t sym(const struct pyproc *py, const char *name)
{
	uint64_t addr, size;

	if (module_symbol(py->pymod, name, &addr, &size) < 0)
		return 0;
	return addr;
}

static void find_types(struct pyproc *py)
{
	struct py_types *t = &py->types;

	t->none = sym(py, "_Py_NoneStruct");
	t->true_ = sym(py, "_Py_TrueStruct");
	t->false_ = sym(py, "_Py_FalseStruct");
	t->type = sym(py, "PyType_Type");
	t->str = sym(py, "PyUnicode_Type");
	t->bytes = sym(py, "PyBytes_Type");
	t->int_ = sym(py, "PyLong_Type");
	t->bool_ = sym(py, "PyBool_Type");
	t->float_ = sym(py, "PyFloat_Type");
	t->tuple = sym(py, "PyTuple_Type");
	t->list = sym(py, "PyList_Type");
	t->dict = sym(py, "PyDict_Type");
	t->set = sym(py, "PySet_Type");
	t->frozenset = sym(py, "PyFrozenSet_Type");
	t->cell = sym(py, "PyCell_Type");
	t->code = sym(py, "PyCode_Type");
	t->gen = sym(py, "PyGen_Type");
	t->coro = sym(py, "PyCoro_Type");
	t->asyncgen = sym(py, "PyAsyncGen_Type");
	t->module = sym(py, "PyModule_Type");
}

int pyproc_interp_head(struct pyproc *py, uint64_t *head, struct cs_err *err)
{
	const struct py_layout *L = &py->layout;
	uint64_t ts;
	int ret;

	if (py->runtime) {
		ret = py_field_u64(py, py->runtime, L->rt_interpreters_head, head,
				   err);
		return ret < 0 ? ret : 0;
	}
	if (py->interp_head_var)
		return memsrc_read_u64(py->ms, py->interp_head_var, head, err);
	if (py->tstate_current_var) {
		ret = memsrc_read_u64(py->ms, py->tstate_current_var, &ts, err);
		if (ret == 0 && ts) {
			ret = py_field_u64(py, ts, L->ts_interp, head, err);
			return ret < 0 ? ret : 0;
		}
	}
	return cs_fail(err, CS_ERR_UNSUPPORTED,
		       "cannot find the interpreter list of this stripped Python %s",
		       py->version);
}

/*
 * The exact version from sys.version in the target: the one source that
 * every build has, stripped or not.  Only the micro version (and any
 * suffix) is taken; major.minor must agree with what chose the table.
 */
static void version_from_sys(struct pyproc *py)
{
	uint64_t interp, sysdict, vobj;
	const char *s;
	struct cs_err err;
	int major, minor, micro;
	size_t n;

	cs_err_init(&err);
	if (pyproc_interp_head(py, &interp, &err) < 0 || !interp ||
	    py_field_u64(py, interp, py->layout.is_sysdict, &sysdict, &err) < 0 ||
	    !sysdict ||
	    pydict_get_str(py, sysdict, "version", &vobj, &err) != 0 ||
	    pystr_get(py, vobj, &s, &err) < 0)
		return;
	if (parse_version(s, &major, &minor, &micro) < 0 ||
	    major != py->major || minor != py->minor)
		return;
	n = strcspn(s, " ");
	if (n >= sizeof(py->version))
		return;
	memcpy(py->version, s, n);
	py->version[n] = '\0';
	py->micro = micro;
}

int pyproc_likely(const struct memsrc *ms)
{
	size_t i;

	for (i = 0; i < ms->nmaps; i++) {
		const char *path = ms->maps[i].path, *base;

		if (!path)
			continue;
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!strncmp(base, "python", 6) || !strncmp(base, "libpython", 9))
			return 1;
	}
	return 0;
}

/* Never inlined (called once): the tests stop coroscope here with gdb,
 * to kill the target between its attach and its first read
 * (tests/test_attach_hostile.py), and a build whose link-time inlining
 * took the symbol away turned that test into a skip. */
__attribute__((noinline))
int pyproc_locate(struct pyproc *py, struct memsrc *ms, struct cs_err *err)
{
	const struct py_layout *table;
	size_t i;
	int ret, micro_known, free_threaded;

	memset(py, 0, sizeof(*py));
	py->ms = ms;
	addrmap_init(&py->codes);
	addrmap_init(&py->strs);
	addrmap_init(&py->typenames);
	addrmap_init(&py->classnames);
	ret = module_list_load(&py->mods, ms, err);
	if (ret < 0)
		return ret;
	for (i = 0; i < py->mods.n; i++)
		if (py->mods.mods[i].is_main)
			py->executable = xstrdup(py->mods.mods[i].path);
	for (i = 0; !py->pymod && i < sizeof(interpreter_symbols) /
					 sizeof(interpreter_symbols[0]); i++) {
		uint64_t addr;

		py->pymod = module_list_find_symbol(&py->mods,
						    interpreter_symbols[i], &addr);
	}
	if (!py->pymod)
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "no CPython interpreter found (no libpython and no "
			       "Python symbols in the executable)");
	ret = find_version(py, err);
	if (ret < 0)
		return ret;
	micro_known = ret;
	py->runtime = sym(py, "_PyRuntime");
	ret = debug_offsets_free_threaded(py, &free_threaded, err);
	if (ret < 0)
		return ret;
	table = py_layout_for(py->major, py->minor, free_threaded);
	if (!table && free_threaded)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "unsupported free-threaded Python %s (coroscope "
			       "reads free-threaded 3.14 only)", py->version);
	if (!table)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "unsupported Python version %s (coroscope reads "
			       "3.6 to 3.14)", py->version);
	py->layout = *table;
	if (py->layout.rt_interpreters_head >= 0 && !py->runtime)
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "Python %s without a _PyRuntime symbol in '%s'",
			       py->version, py->pymod->path);
	if (py->layout.rt_interpreters_head < 0) {
		/* 3.6: the list head is a file-static; stripped builds lose it
		 * and we fall back to the thread holding the GIL. */
		py->interp_head_var = sym(py, "interp_head");
		py->tstate_current_var = sym(py, "_PyThreadState_Current");
		py->gc_generation0_var = sym(py, "_PyGC_generation0");
	}
	find_types(py);
	if (!py->types.str || !py->types.code || !py->types.none)
		return cs_fail(err, CS_ERR_NOT_PYTHON,
			       "Python %s in '%s' lacks the symbols of its "
			       "built-in types", py->version, py->pymod->path);
	ret = debug_offsets_apply(py, err);
	if (ret == 0)
		ret = py_layout_check(&py->layout, err);
	if (ret == 0 && !micro_known)
		version_from_sys(py);
	return ret;
}

void pyproc_forget_objects(struct pyproc *py)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (addrmap_next(&py->strs, &pos, &key, &val))
		free(val);
	addrmap_release(&py->strs);
	py->last_str = 0;
	py->last_str_text = NULL;
	pos = 0;
	while (addrmap_next(&py->typenames, &pos, &key, &val))
		free(val);
	addrmap_release(&py->typenames);
	pos = 0;
	while (addrmap_next(&py->classnames, &pos, &key, &val))
		free(val);
	addrmap_release(&py->classnames);
	py->unwrap_type = 0;
	code_cache_clear(py);
}

struct pyproc *pyproc_clone(const struct pyproc *py)
{
	struct pyproc *clone = xmalloc(sizeof(*clone));

	*clone = *py;
	addrmap_init(&clone->codes);
	clone->last_code = NULL;
	addrmap_init(&clone->strs);
	clone->last_str = 0;
	clone->last_str_text = NULL;
	addrmap_init(&clone->typenames);
	addrmap_init(&clone->classnames);
	clone->unwrap_type = 0;
	memset(clone->line_memo, 0, sizeof(clone->line_memo));
	memset(clone->with_memo, 0, sizeof(clone->with_memo));
	memset(clone->setup_memo, 0, sizeof(clone->setup_memo));
	memset(clone->insn_memo, 0, sizeof(clone->insn_memo));
	return clone;
}

void pyproc_clone_free(struct pyproc *clone)
{
	if (!clone)
		return;
	/* The modules and the executable's name are the original's. */
	pyproc_forget_objects(clone);
	free(clone);
}

void pyproc_release(struct pyproc *py)
{
	pyproc_forget_objects(py);
	module_list_release(&py->mods);
	free(py->executable);
	py->executable = NULL;
}
