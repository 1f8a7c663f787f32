/*
 * _Py_DebugOffsets (3.13+): the interpreter's own description of its
 * struct layouts, at offset 0 of _PyRuntime.  When the target carries
 * one, it is validated and its offsets replace the generated table's, so
 * that a patch release with a different layout is still read right.
 */
#ifndef COROSCOPE_READERS_DEBUG_OFFSETS_H
#define COROSCOPE_READERS_DEBUG_OFFSETS_H

#include "readers/pyproc.h"

/*
 * Read, validate and apply the block.  Returns 0 when applied or when the
 * version has none; CS_ERR_UNSUPPORTED when a block that must be there
 * is missing or does not validate.
 */
int debug_offsets_apply(struct pyproc *py, struct cs_err *err);

/*
 * Whether the target is a free-threaded build (1) or not (0), from the
 * block's header: what picks the version table.  0 for versions without
 * a block; CS_ERR_UNSUPPORTED for a flag that is neither.
 */
int debug_offsets_free_threaded(struct pyproc *py, int *free_threaded,
				struct cs_err *err);

#endif
