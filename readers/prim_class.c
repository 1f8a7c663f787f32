/*
 * The class a primitive's object has of its own, where that is a
 * subclass of its family's (asyncio's PriorityQueue, a program's own
 * Thread): named as the interpreter names it, in the words the text and
 * JSON reports use (readers/primitives.h: py_prim.cls).
 */
#include "readers/primitives_internal.h"

#include <string.h>

#include "common/strbuf.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Bytes of a module's or a class's name a class name keeps: a
 * target's names can be of any length. */
#define CLASS_PART_MAX 200

/* How much of s a class name keeps: CLASS_PART_MAX bytes at most, and
 * no last character cut short (here, or where the name was read:
 * pytype_name() keeps 200 bytes of a tp_name as they come). */
static int part(const char *s)
{
	size_t n = strlen(s), lead, need;
	unsigned char c;

	if (n > CLASS_PART_MAX)
		n = CLASS_PART_MAX;
	/* The last character's lead byte: at most three back. */
	for (lead = n; lead > 0 && n - lead < 4; lead--)
		if (((unsigned char)s[lead - 1] & 0xc0) != 0x80)
			break;
	if (lead == 0)
		return (int)n;
	c = (unsigned char)s[lead - 1];
	need = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	return (int)(lead - 1 + need <= n ? n : lead - 1);
}

/* Is type what the module `mod` (len bytes of a name) exports as
 * `name`? */
static int exported_as(struct pyproc *py, const char *mod, size_t len,
		       const char *name, uint64_t type)
{
	char buf[128];
	uint64_t interp = 0, dict = 0, v = 0;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, mod, len);
	buf[len] = 0;
	return pyproc_interp_head(py, &interp, NULL) == 0 && interp &&
	       pymodule_dict(py, interp, buf, &dict, NULL) == 0 && dict &&
	       pydict_get_str(py, dict, name, &v, NULL) == 0 && v == type;
}

/*
 * "module.Name" of a subclass of row i's class into sb: by the module
 * the row's name gives where that module exports it under its name
 * (asyncio.queues.PriorityQueue is "asyncio.PriorityQueue", as its
 * Queue is "asyncio.Queue"; multiprocessing.context.Process is
 * "multiprocessing.Process"), else by its own __module__.
 */
static void class_name(struct pyproc *py, const struct py_prim_types *t,
		       size_t i, uint64_t type, struct strbuf *sb)
{
	const char *name = py_type_name_cached(py, type), *mod = NULL;
	const char *dot = strrchr(t->name[i], '.');
	const char *own = strrchr(name, '.');
	uint64_t dict = 0, v = 0;

	if (!*name || !strcmp(name, "?") || !dot)
		return;
	/* A class of C or Cython (gevent's JoinableQueue) is named
	 * "module.Name" in its tp_name. */
	if (own) {
		if (exported_as(py, t->name[i], (size_t)(dot - t->name[i]),
				own + 1, type))
			strbuf_addf(sb, "%.*s%.*s", (int)(dot - t->name[i] + 1),
				    t->name[i], part(own + 1), own + 1);
		else
			strbuf_addf(sb, "%.*s", part(name), name);
		return;
	}
	if (exported_as(py, t->name[i], (size_t)(dot - t->name[i]), name,
			type)) {
		strbuf_addf(sb, "%.*s%.*s", (int)(dot - t->name[i] + 1),
			    t->name[i], part(name), name);
		return;
	}
	/* A class defined in Python keeps its module in its dict. */
	if (py_field_u64(py, type, py->layout.tp_dict, &dict, NULL) <= 0 ||
	    !dict || pydict_get_str(py, dict, "__module__", &v, NULL) != 0 ||
	    pystr_get(py, v, &mod, NULL) < 0)
		return;
	strbuf_addf(sb, "%.*s.%.*s", part(mod), mod, part(name), name);
}

const char *prim_own_class(struct pyproc *py, const struct py_prim_types *t,
			   size_t i, uint64_t type)
{
	struct strbuf sb;
	char *s;
	int found;

	if (type == t->type[i])
		return NULL;
	s = addrmap_get(&py->classnames, type, &found);
	if (found)
		return *s ? s : NULL;
	strbuf_init(&sb);
	class_name(py, t, i, type, &sb);
	/* (the row's name may be the subclass's own public one:
	 * multiprocessing.Process is a subclass of BaseProcess) */
	s = sb.len && strcmp(sb.buf, t->name[i]) ? strbuf_detach(&sb) :
	    xstrdup("");
	strbuf_release(&sb);
	addrmap_put(&py->classnames, type, s);
	return *s ? s : NULL;
}
