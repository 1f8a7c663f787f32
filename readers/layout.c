#include "readers/layout.h"

#include <stddef.h>

#include "common/error.h"
#include "common/banned.h"

/* Each size a reader copies, and the struct it belongs to. */
struct copy_size {
	const char *what;
	long bytes;
};

int py_layout_check(const struct py_layout *L, struct cs_err *err)
{
	const struct copy_size sizes[] = {
		{ "PyCodeObject", L->co_size },
		{ "PyFrameObject", L->f_localsplus },
		{ "_PyInterpreterFrame", L->if_localsplus },
		{ "PyGenObject", L->gen_size },
		{ "PyGenObject and its frame",
		  L->gen_iframe >= 0 ? (long)L->gen_iframe + L->if_localsplus : -1 },
		{ "PyAsyncGenObject", L->agen_running_async >= 0 ?
				      (long)L->agen_running_async + 1 : -1 },
		{ "TaskObj", L->task_size },
		{ "FutureObj", L->fut_size },
		{ "PyCompactUnicodeObject", L->u_compact_size },
		{ "PyDictKeysObject", L->dk_indices },
		{ "PyHeapTypeObject", (long)L->ht_cached_keys + 8 },
		{ "PyDictObject", (long)L->dict_values + 8 },
		{ "PySetObject", (long)L->set_table + 8 },
		{ "PyGC_Head and object head", (long)L->gc_head_size + 16 },
	};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		/* -1: the struct does not exist in this version */
		if (sizes[i].bytes > PY_LAYOUT_MAX_STRUCT)
			return cs_fail(err, CS_ERR_UNSUPPORTED,
				       "layout of %s is %ld bytes, more than the "
				       "%d coroscope reads",
				       sizes[i].what, sizes[i].bytes,
				       PY_LAYOUT_MAX_STRUCT);
	return 0;
}
