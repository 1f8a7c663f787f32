#include "readers/debug_offsets.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/le.h"
#include "readers/fields.h"
#include "common/banned.h"

/*
 * _Py_DebugOffsets is a cookie, the PY_VERSION_HEX, a free-threading
 * flag, then groups of uint64 offsets.  Its member list differs between
 * minor versions, so each version has a spec here: the members in order,
 * and for each the py_layout field it overrides (or none).  This is the
 * one place that knows the block's shape.
 */
#define COOKIE "xdebugpy"
#define HEADER_WORDS 3     /* cookie, version, free_threaded */
#define MAX_WORDS 256

enum dbg_how {
	DBG_SKIP,        /* a member we do not use */
	DBG_SET,         /* layout field = value */
	DBG_SIZE,        /* a struct size: checked, stored if a field given */
	DBG_GIL_BASE,    /* offset of the embedded _gil in the interpreter */
	DBG_GIL_MEMBER,  /* interp-relative member of _gil: minus the base */
};

struct dbg_member {
	enum dbg_how how;
	int field;       /* offsetof(struct py_layout, ...) or -1 */
};

#define SET(f) { DBG_SET, (int)offsetof(struct py_layout, f) }
#define SIZE(f) { DBG_SIZE, (int)offsetof(struct py_layout, f) }
#define SIZE_ONLY { DBG_SIZE, -1 }
#define SKIP { DBG_SKIP, -1 }
#define GIL_BASE { DBG_GIL_BASE, -1 }
#define GIL_MEMBER(f) { DBG_GIL_MEMBER, (int)offsetof(struct py_layout, f) }

static const struct dbg_member members_313[] = {
	/* runtime_state */
	SIZE(rt_size), SKIP /* finalizing */, SET(rt_interpreters_head),
	/* interpreter_state */
	SIZE(is_size), SET(is_id), SET(is_next), SET(is_tstate_head),
	SET(is_gc), SET(is_modules), SET(is_sysdict), SKIP /* builtins */,
	SET(is_ceval_gil), GIL_BASE, SKIP /* gil enabled */,
	GIL_MEMBER(gil_locked), GIL_MEMBER(gil_last_holder),
	/* thread_state */
	SIZE(ts_size), SKIP /* prev */, SET(ts_next), SET(ts_interp),
	SET(ts_current_frame), SET(ts_thread_id), SET(ts_native_thread_id),
	SKIP /* datastack_chunk */, SKIP /* status */,
	/* interpreter_frame */
	SIZE(if_size), SET(if_previous), SET(if_code), SET(if_instr_ptr),
	SET(if_localsplus), SET(if_owner),
	/* code_object */
	SIZE(co_size), SET(co_filename), SET(co_name), SET(co_qualname),
	SET(co_linetable), SET(co_firstlineno), SET(co_argcount),
	SET(co_localsplusnames), SET(co_localspluskinds), SET(co_code_adaptive),
	/* pyobject */
	SIZE_ONLY, SET(ob_type),
	/* type_object */
	SIZE_ONLY, SET(tp_name), SKIP /* tp_repr */, SET(tp_flags),
	/* tuple_object */
	SIZE_ONLY, SET(tuple_items), SET(ob_size),
	/* list_object */
	SIZE_ONLY, SET(list_items), SKIP /* ob_size, as tuples */,
	/* dict_object */
	SIZE_ONLY, SET(dict_keys), SET(dict_values),
	/* float_object */
	SIZE_ONLY, SET(float_fval),
	/* long_object */
	SIZE_ONLY, SET(long_tag), SET(long_digits),
	/* bytes_object */
	SIZE_ONLY, SKIP /* ob_size, as tuples */, SET(bytes_sval),
	/* unicode_object */
	SIZE_ONLY, SET(u_state), SET(u_length), SET(u_ascii_size),
	/* gc */
	SIZE_ONLY, SKIP /* collecting */,
};

/* 3.14: threads_main, stackpointer, set and generator groups were added;
 * the list ends before llist_node and debugger_support, which have no
 * size member and nothing we use. */
static const struct dbg_member members_314[] = {
	/* runtime_state */
	SIZE(rt_size), SKIP /* finalizing */, SET(rt_interpreters_head),
	/* interpreter_state */
	SIZE(is_size), SET(is_id), SET(is_next), SET(is_tstate_head),
	SKIP /* threads_main */, SET(is_gc), SET(is_modules), SET(is_sysdict),
	SKIP /* builtins */, SET(is_ceval_gil), GIL_BASE, SKIP /* enabled */,
	GIL_MEMBER(gil_locked), GIL_MEMBER(gil_last_holder),
	SKIP /* code_object_generation */, SKIP /* tlbc_generation */,
	/* thread_state */
	SIZE(ts_size), SKIP /* prev */, SET(ts_next), SET(ts_interp),
	SET(ts_current_frame), SET(ts_thread_id), SET(ts_native_thread_id),
	SKIP /* datastack_chunk */, SKIP /* status */,
	/* interpreter_frame */
	SIZE(if_size), SET(if_previous), SET(if_code), SET(if_instr_ptr),
	SET(if_localsplus), SET(if_owner), SET(if_stackpointer),
	SKIP /* tlbc_index */,
	/* code_object */
	SIZE(co_size), SET(co_filename), SET(co_name), SET(co_qualname),
	SET(co_linetable), SET(co_firstlineno), SET(co_argcount),
	SET(co_localsplusnames), SET(co_localspluskinds), SET(co_code_adaptive),
	SET(co_tlbc) /* 0 in a default build: kept as -1 there */,
	/* pyobject */
	SIZE_ONLY, SET(ob_type),
	/* type_object */
	SIZE_ONLY, SET(tp_name), SKIP /* tp_repr */, SET(tp_flags),
	/* tuple_object */
	SIZE_ONLY, SET(tuple_items), SET(ob_size),
	/* list_object */
	SIZE_ONLY, SET(list_items), SKIP /* ob_size, as tuples */,
	/* set_object */
	SIZE_ONLY, SET(set_used), SET(set_table), SET(set_mask),
	/* dict_object */
	SIZE_ONLY, SET(dict_keys), SET(dict_values),
	/* float_object */
	SIZE_ONLY, SET(float_fval),
	/* long_object */
	SIZE_ONLY, SET(long_tag), SET(long_digits),
	/* bytes_object */
	SIZE_ONLY, SKIP /* ob_size, as tuples */, SET(bytes_sval),
	/* unicode_object */
	SIZE_ONLY, SET(u_state), SET(u_length), SET(u_ascii_size),
	/* gc */
	SIZE_ONLY, SKIP /* collecting */,
	/* gen_object */
	SIZE(gen_size), SET(gen_name), SET(gen_iframe), SET(gen_frame_state),
};

struct dbg_spec {
	int major, minor;
	const struct dbg_member *members;
	size_t n;
};

static const struct dbg_spec specs[] = {
	{ 3, 13, members_313, sizeof(members_313) / sizeof(members_313[0]) },
	{ 3, 14, members_314, sizeof(members_314) / sizeof(members_314[0]) },
};

static const struct dbg_spec *spec_for(int major, int minor)
{
	size_t i;

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (specs[i].major == major && specs[i].minor == minor)
			return &specs[i];
	return NULL;
}

static int *field_ptr(struct py_layout *L, int field)
{
	return (int *)(void *)((char *)L + field);
}

/*
 * Apply the words to a copy of the layout, checking as we go that every
 * size is sane and every offset lies inside the struct of its group.
 */
static int apply(const struct dbg_spec *spec, const uint64_t *w,
		 struct py_layout *L, struct cs_err *err)
{
	uint64_t group_size = 0, gil_base = 0;
	size_t i;

	for (i = 0; i < spec->n; i++) {
		const struct dbg_member *m = &spec->members[i];
		uint64_t v = w[i];

		if (m->how == DBG_SIZE) {
			if (v == 0 || v > (1u << 24))
				goto bad;
			group_size = v;
			if (m->field >= 0)
				*field_ptr(L, m->field) = (int)v;
			continue;
		}
		if (v >= group_size)
			goto bad;
		switch (m->how) {
		case DBG_SET:
			/* A member the build lacks reads 0 (co_tlbc without free
			 * threading): keep the table's -1 rather than alias the
			 * object header. */
			if (v == 0 && *field_ptr(L, m->field) < 0)
				break;
			*field_ptr(L, m->field) = (int)v;
			break;
		case DBG_GIL_BASE:
			gil_base = v;
			break;
		case DBG_GIL_MEMBER:
			if (v < gil_base || v - gil_base > 4096)
				goto bad;
			*field_ptr(L, m->field) = (int)(v - gil_base);
			break;
		default:
			break;
		}
	}
	return 0;
bad:
	return cs_fail(err, CS_ERR_UNSUPPORTED,
		       "the target's _Py_DebugOffsets do not validate (member %zu "
		       "is %llu)", i, (unsigned long long)w[i]);
}

/*
 * 3.14's _asyncio extension describes its Task layout in an ELF section
 * .AsyncioDebug: {size, task_name, task_awaited_by, task_is_task,
 * task_awaited_by_is_set, task_coro, task_node}, then the interpreter's
 * and each thread's task list heads (readers/tasks.c walks them too).
 */
static const struct dbg_member members_asyncio_314[] = {
	SIZE(task_size), SET(task_name), SET(fut_awaited_by), SKIP /* is_task */,
	SKIP /* awaited_by_is_set */, SET(task_coro), SET(task_node),
	/* interpreter_state */
	SIZE_ONLY, SET(is_asyncio_tasks_head),
	/* thread_state (_PyThreadStateImpl) */
	SIZE_ONLY, SET(ts_asyncio_running_loop), SKIP /* running_task */,
	SET(ts_asyncio_tasks_head),
};

static int asyncio_offsets_apply(struct pyproc *py, struct py_layout *L,
				 struct cs_err *err)
{
	static const struct dbg_spec spec = {
		3, 14, members_asyncio_314,
		sizeof(members_asyncio_314) / sizeof(members_asyncio_314[0]),
	};
	const struct module *mod;
	uint64_t addr, size, words[16];
	int ret;

	if (L->task_node < 0)
		return 0;  /* only 3.14+ tasks carry the section */
	mod = module_list_find_prefix(&py->mods, "_asyncio.");
	/* Not loaded yet (asyncio unused), or built in: keep the table. */
	if (!mod || module_section(mod, ".AsyncioDebug", &addr, &size) < 0)
		return 0;
	if (size < spec.n * 8)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "the .AsyncioDebug section of '%s' is too short",
			       mod->path);
	ret = py_read_words(py, addr, words, spec.n, err);
	if (ret < 0)
		return ret;
	return apply(&spec, words, L, err);
}

int debug_offsets_free_threaded(struct pyproc *py, int *free_threaded,
				struct cs_err *err)
{
	uint64_t words[HEADER_WORDS];
	int ret;

	*free_threaded = 0;
	if (!spec_for(py->major, py->minor) || !py->runtime)
		return 0;
	/* Static data, written once at start-up: safe to read unstopped. */
	ret = py_read_words(py, py->runtime, words, HEADER_WORDS, err);
	if (ret < 0)
		return ret;
	/* A missing cookie is reported by debug_offsets_apply(). */
	if (words[0] != le_u64((const unsigned char *)COOKIE))
		return 0;
	if (words[2] > 1)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "the target's _Py_DebugOffsets do not validate "
			       "(free_threaded is %llu)",
			       (unsigned long long)words[2]);
	*free_threaded = (int)words[2];
	return 0;
}

int debug_offsets_apply(struct pyproc *py, struct cs_err *err)
{
	uint64_t words[HEADER_WORDS + MAX_WORDS];
	const struct dbg_spec *spec = spec_for(py->major, py->minor);
	struct py_layout copy = py->layout;
	unsigned major, minor;
	int ret;

	if (!spec)
		return 0;
	if (!py->runtime)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "Python %s without _PyRuntime", py->version);
	if (spec->n > MAX_WORDS)
		CS_BUG("debug offsets spec too long");
	/* Static data, written once at start-up: safe to read unstopped. */
	ret = py_read_words(py, py->runtime, words, HEADER_WORDS + spec->n, err);
	if (ret < 0)
		return ret;
	if (words[0] != le_u64((const unsigned char *)COOKIE))
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "Python %s has no _Py_DebugOffsets at _PyRuntime",
			       py->version);
	major = (unsigned)(words[1] >> 24) & 0xff;
	minor = (unsigned)(words[1] >> 16) & 0xff;
	if ((int)major != py->major || (int)minor != py->minor)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "_Py_DebugOffsets say %u.%u but the binary says %s",
			       major, minor, py->version);
	/* The table was chosen by this flag (debug_offsets_free_threaded);
	 * a change in between means we are not reading what we think. */
	if (words[2] != (uint64_t)py->layout.free_threaded)
		return cs_fail(err, CS_ERR_UNSUPPORTED,
			       "_Py_DebugOffsets of Python %s changed its "
			       "free-threading flag", py->version);
	ret = apply(spec, words + HEADER_WORDS, &copy, err);
	if (ret == 0)
		ret = asyncio_offsets_apply(py, &copy, err);
	if (ret < 0)
		return ret;
	py->layout = copy;
	return 0;
}
