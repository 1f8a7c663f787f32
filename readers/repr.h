/*
 * Short, safe reprs of target objects for --locals: what a user reading a
 * stack wants to see of a value, without ever following an unbounded
 * structure.
 *
 *   None, bool, int (any size), float: as Python's repr();
 *   str, bytes: as repr(), the first PY_REPR_MAX_CHARS then "...";
 *   tuple, list, dict, set, frozenset: repr() of the first
 *     PY_REPR_MAX_ITEMS items (py->repr_max_items when set: --max-items),
 *     then ", ..." and " (len N)";
 *     nested containers below PY_REPR_MAX_DEPTH as "<list object at 0x..>";
 *   exceptions: "module.Name(REPR(arg), ...)" as a traceback's last line
 *     names its type (not "builtins" nor "__main__"), below depth
 *     PY_REPR_MAX_DEPTH + 1;
 *   classes: "<class 'module.Name'>"; functions: "<function qualname at
 *     0x...>"; bound methods: "<bound method qualname of REPR(self)>";
 *     modules: "<module 'name'>";
 *   anything else: "<module.TypeName object at 0x...>".
 *
 * Unreadable memory never fails the caller: it shows as
 * "<unreadable object at 0x...>".
 */
#ifndef COROSCOPE_READERS_REPR_H
#define COROSCOPE_READERS_REPR_H

#include <stdint.h>

#include "common/strbuf.h"
#include "readers/pyproc.h"

#define PY_REPR_MAX_CHARS 200
#define PY_REPR_MAX_ITEMS 8
#define PY_REPR_MAX_DEPTH 2

void pyrepr(struct pyproc *py, uint64_t obj, struct strbuf *out);

/* An exception's repr(), its type with its module as a traceback's last
 * line names it: "json.decoder.JSONDecodeError('Expecting value: ...')";
 * "ValueError(?)" when its args cannot be read; exceptions among them
 * (an ExceptionGroup's) shown so too. */
void pyrepr_exception(struct pyproc *py, uint64_t exc, struct strbuf *out);

#endif
