/*
 * Small lookups the scheduler readers (greenlets.c, trio.c) share and
 * the version table has no entry for: a module's attribute, and the code
 * object a function runs.
 */
#ifndef COROSCOPE_READERS_FUNCS_H
#define COROSCOPE_READERS_FUNCS_H

#include <stdint.h>

#include "readers/code.h"
#include "readers/pyproc.h"

/* sys.modules[mod].name in the first interpreter, or 0 when absent. */
uint64_t py_module_attr(struct pyproc *py, const char *mod, const char *name);

/* The code a function object runs, or NULL for anything else: a probe
 * for the one code object a PyFunctionObject points to (its place
 * differs between versions), and that code's qualname. */
const struct py_code *py_function_code(struct pyproc *py, uint64_t func);
const char *py_function_qualname(struct pyproc *py, uint64_t func);

#endif
