/*
 * What an object is to the asyncio machinery: a C or pure-Python Task, a
 * C or pure-Python Future, a TaskGroup, a concurrent.futures Future, a
 * multiprocessing pool's result, or none of these.  Types are
 * found once per dump in each interpreter's sys.modules (asyncio may be
 * absent; each subinterpreter has its own classes) and each type's
 * answer is cached; subclasses count as their base.
 *
 * Shared by the task finder (readers/tasks.c) and the awaiter linker
 * (readers/awaiters.c); not an interface outside readers/.
 */
#ifndef COROSCOPE_READERS_AIO_CLASS_H
#define COROSCOPE_READERS_AIO_CLASS_H

#include <stdint.h>

#include "common/addrmap.h"
#include "readers/pyproc.h"

enum aio_class {
	AIO_NONE = 1,        /* stored +1 in the class cache: 0 means unknown */
	AIO_C_TASK,
	AIO_PY_TASK,
	AIO_C_FUTURE,
	AIO_PY_FUTURE,
	AIO_TASKGROUP,
	AIO_CF_FUTURE,       /* concurrent.futures' Future (an executor's
				job), no asyncio class */
	AIO_MP_RESULT,       /* multiprocessing.pool's ApplyResult (a
				pool's job: apply_async(), map_async()) */
};

/* Interpreters whose asyncio classes are looked at. */
#define AIO_MAX_INTERPS 64

/* Entries of struct aio_types' memo. */
#define AIO_RECENT_BITS 4
#define AIO_RECENT (1 << AIO_RECENT_BITS)

/* The classes of one interpreter, by enum aio_class (0 where absent). */
struct aio_type_set {
	uint64_t base[AIO_MP_RESULT + 1];
};

struct aio_types {
	struct pyproc *py;        /* borrowed */
	struct aio_type_set sets[AIO_MAX_INTERPS];
	size_t nsets;             /* interpreters with asyncio,
				     concurrent.futures or multiprocessing
				     .pool loaded */
	struct addrmap classes;   /* type -> enum aio_class */
	/* Types classified lately and their classes, direct-mapped (type
	 * 0: empty; memset() empties it): the GC lists interleave a few
	 * types (a task, its future, their dicts, bound methods), which a
	 * single remembered type kept missing. */
	struct aio_recent {
		uint64_t type;
		enum aio_class c;
	} recent[AIO_RECENT];
};

/* Look the types up in the target (none found: everything is AIO_NONE). */
void aio_types_find(struct aio_types *t, struct pyproc *py);
void aio_types_release(struct aio_types *t);

enum aio_class aio_classify(struct aio_types *t, uint64_t type);
/* The class of the object at obj (AIO_NONE when unreadable or 0). */
enum aio_class aio_classify_obj(struct aio_types *t, uint64_t obj);

/* Is type the C Future or a subclass of it (3.6's Python Task is)? */
int aio_is_c_future_type(struct aio_types *t, uint64_t type);

int aio_is_task(enum aio_class c);
/* Tasks are futures too. */
int aio_is_future(enum aio_class c);

#endif
