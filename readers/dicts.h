/*
 * Dicts, sets and what is found through them: instance attributes (in
 * the __dict__, the managed dict or the inline values, as the version
 * keeps them), class attributes along the MRO, and modules' dicts.
 *
 * Like readers/objects.h: every table is copied before it is decoded,
 * every size checked, every walk bounded; a malformed object is an error
 * (CS_ERR_MEMORY).
 */
#ifndef COROSCOPE_READERS_DICTS_H
#define COROSCOPE_READERS_DICTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/addrmap.h"
#include "readers/pyproc.h"

/* One live entry of a dict or set, in iteration order. */
struct pydict_entry {
	uint64_t key, value;     /* value is 0 for sets */
};

/*
 * The first min(used, max) entries of a dict (insertion order) or a
 * set/frozenset (table order, as Python iterates); *used gets the count.
 */
int pydict_entries(struct pyproc *py, uint64_t dict,
		   struct pydict_entry *out, size_t max, size_t *used,
		   struct cs_err *err);
int pyset_entries(struct pyproc *py, uint64_t set, struct pydict_entry *out,
		  size_t max, size_t *used, struct cs_err *err);

/* dict[key] for a str key: 0 found, 1 absent, <0 error. */
int pydict_get_str(struct pyproc *py, uint64_t dict, const char *key,
		   uint64_t *value, struct cs_err *err);
/*
 * Every entry of dict keyed by an int from 1 to INT64_MAX, into out
 * (key -> value): one walk, where a lookup of each of n keys would
 * walk the dict n times (threading._active of thousands of threads).
 * 0 or a negative status (out keeps what was found before it).
 */
int pydict_int_index(struct pyproc *py, uint64_t dict, struct addrmap *out,
		     struct cs_err *err);

/*
 * An instance attribute stored in the object's __dict__ (or managed
 * dict / inline values): 0 found, 1 absent, <0 error.
 */
int pyobj_get_attr(struct pyproc *py, uint64_t obj, const char *name,
		   uint64_t *value, struct cs_err *err);

/*
 * Attribute lookup as a plain value: the instance's own attribute, else
 * the first class in the type's MRO whose __dict__ has the name (a
 * Future's class-level default _state, for example).  Descriptors are
 * returned as they are, not called.  0 found, 1 absent, <0 error.
 */
int pyobj_lookup(struct pyproc *py, uint64_t obj, const char *name,
		 uint64_t *value, struct cs_err *err);
/* The offset of slot `name` (__slots__) in obj, from its class's member
 * descriptor: 0, or a negative status when there is no such slot. */
int pyobj_slot_offset(struct pyproc *py, uint64_t obj, const char *name,
		      int *off, struct cs_err *err);

/* pyobj_lookup() where absent and unreadable mean the same: 0. */
uint64_t pyobj_lookup_or_0(struct pyproc *py, uint64_t obj, const char *name);
/* The instance's own attribute, from its __dict__ or its slot (attrs
 * classes, asyncio's Handle); 0 where absent, unset or unreadable. */
uint64_t pyobj_own_or_0(struct pyproc *py, uint64_t obj, const char *name);

/* sys.modules[name]'s __dict__ for the first interpreter that has it:
 * 0 found, 1 absent, <0 error. */
int pymodule_dict(struct pyproc *py, uint64_t interp, const char *name,
		  uint64_t *dict, struct cs_err *err);

#endif
