/*
 * Small lookups the scheduler readers (greenlets.c, trio.c) share and
 * the version table has no entry for: a module's attribute, the code
 * object a function runs, a C function's name.
 */
#ifndef COROSCOPE_READERS_FUNCS_H
#define COROSCOPE_READERS_FUNCS_H

#include <stddef.h>
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

/* The function and self of a bound method (a PyMethodObject, whose type
 * the caller checked): im_func is the pointer just before im_self in
 * every version.  0, or -1 when unreadable. */
int py_bound_method(struct pyproc *py, uint64_t method, uint64_t *func,
		    uint64_t *self);

/* The C name (ml_name) of a builtin function or method, or of a Cython
 * function (whose struct starts with a PyCFunctionObject), into buf
 * (size - 1 bytes at most, NUL-terminated): 0, or a negative status. */
struct cs_err;
int py_cfunction_name(struct pyproc *py, uint64_t fn, char *buf, size_t size,
		      struct cs_err *err);
/* The same for a method_descriptor (a C class's method taken from the
 * class: `type(lock).__exit__`), from its d_method. */
int py_method_descr_name(struct pyproc *py, uint64_t descr, char *buf,
			 size_t size, struct cs_err *err);

#endif
