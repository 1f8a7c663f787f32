#!/usr/bin/python3
"""Generate readers/layouts_generated.c from the installed CPython builds.

For every installed pyenv CPython 3.6 - 3.13 (and every --prefix DIR), each
field of struct py_layout (readers/layout.h) is derived from

  * the DWARF debug info of libpython (or the python executable when the
    build is static) and of the extension modules in EXTENSIONS,
    read through gdb's Python API (gdb -batch -nx), which handles DWARF 4
    and 5 alike;
  * the interpreter itself, for values that exist only as C macros but
    are visible from Python (opcode numbers, CO_* flags, digit size);
  * a short table of documented facts (FACTS below) for the few macros and
    behaviours that neither source exposes.

Each table is then verified against the running interpreter: a probe run
with that interpreter reads its own objects through ctypes at the derived
offsets and compares with what Python reports
(tools/layout-probes/verify.py).

The list of fields comes from parsing readers/layout.h; a field without a
rule, or a rule without a field, is an error, so the header and this script
cannot drift apart.

  tools/gen-layouts.py            rewrite readers/layouts_generated.c
  tools/gen-layouts.py --check    exit 1 and print a diff if it is stale
  tools/gen-layouts.py --prefix /opt/python3.14   add another build

Versions that are not installed here are kept from the committed file.
"""

import argparse
import concurrent.futures
import difflib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "readers", "layout.h")
OUTPUT = os.path.join(ROOT, "readers", "layouts_generated.c")
# The scripts run under gdb and under each interpreter (see their headers).
PROBES = os.path.join(ROOT, "tools", "layout-probes")
PYENV_VERSIONS = os.path.join(os.environ.get("PYENV_ROOT", "/root/.pyenv"),
                              "versions")
PYENV_MINORS = range(6, 14)

MISSING = -1
# The extension modules whose structs the rules read, as src="..." names
# them, in the order the generated comments list their build ids.
EXTENSIONS = [("aio", "_asyncio"), ("queue", "_queue"),
              ("socket", "_socket"), ("mp", "_multiprocessing")]
SOURCE_SEP = "; "
# Generator/frame states a version does not have.  -1 cannot mean "none"
# here because it is a real state value (FRAME_SUSPENDED in 3.10 - 3.12).
GEN_STATE_NONE = -100
GEN_STATE_NONE_NAME = "PY_GEN_STATE_NONE"


class GenError(Exception):
    pass


# --------------------------------------------------------------------------
# Reading readers/layout.h

def parse_header(path):
    """Return ([(type, field)], {enum type: {value: name}}) of layout.h."""
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)

    enums = {}
    for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\}\s*;", text, re.S):
        values = {}
        nxt = 0
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            im = re.fullmatch(r"(\w+)(?:\s*=\s*(-?\w+))?", item)
            if not im:
                raise GenError("layout.h: cannot parse enumerator %r" % item)
            if im.group(2) is not None:
                nxt = int(im.group(2), 0)
            values[nxt] = im.group(1)
            nxt += 1
        enums["enum " + m.group(1)] = values

    m = re.search(r"struct\s+py_layout\s*\{(.*?)\}\s*;", text, re.S)
    if not m:
        raise GenError("layout.h: no struct py_layout")
    fields = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        dm = re.fullmatch(r"(int|enum \w+)\s+(\w+(?:\s*,\s*\w+)*)", decl)
        if not dm:
            raise GenError("layout.h: cannot parse member declaration %r "
                           "(only 'int a, b;' and 'enum e a;' are supported)"
                           % decl)
        ctype = dm.group(1)
        if ctype != "int" and ctype not in enums:
            raise GenError("layout.h: unknown type %r" % ctype)
        for name in dm.group(2).split(","):
            fields.append((ctype, name.strip()))
    names = [n for _, n in fields]
    if len(set(names)) != len(names):
        raise GenError("layout.h: duplicate member in struct py_layout")
    return fields, enums


# --------------------------------------------------------------------------
# Rules: how each field is derived.  A rule lists the DWARF queries it needs
# (so they can be batched into one gdb run per file) and computes its value
# from the answers, the interpreter's facts and the minor version.

def member_query(types, path):
    return ("member", tuple(types), path)


class Rule:
    def queries(self):
        return []

    def value(self, ctx):
        raise NotImplementedError


class Off(Rule):
    """Byte offset of the first member path that exists in the first type
    that exists; nested paths ("a.b") add up, anonymous structs and unions
    are looked through.  pointer=True only accepts a pointer member."""

    def __init__(self, types, *paths, src="py", pointer=False):
        self.types, self.paths, self.src = types, paths, src
        self.pointer = pointer

    def queries(self):
        return [(self.src, member_query(self.types, p)) for p in self.paths]

    def value(self, ctx):
        for p in self.paths:
            r = ctx.answer(self.src, member_query(self.types, p))
            if r is None:
                continue
            if r["bitsize"] or r["bitpos"] % 8:
                raise GenError("%s.%s is a bitfield, not an offset"
                               % (r["type"], p))
            if self.pointer and r["code"] != "PTR":
                continue
            return r["bitpos"] // 8
        return MISSING


class Size(Rule):
    def __init__(self, types, src="py"):
        self.types, self.src = types, src

    def queries(self):
        return [(self.src, ("sizeof", tuple(self.types)))]

    def value(self, ctx):
        r = ctx.answer(self.src, ("sizeof", tuple(self.types)))
        return MISSING if r is None else r


class BitShift(Rule):
    """Bit position of bitfield `bit` inside member `word` (little endian:
    counted from the least significant bit of the word)."""

    def __init__(self, types, word, bit):
        self.types, self.word, self.bit = types, word, bit

    def queries(self):
        return [("py", member_query(self.types, self.word)),
                ("py", member_query(self.types, self.word + "." + self.bit))]

    def value(self, ctx):
        w = ctx.answer("py", member_query(self.types, self.word))
        b = ctx.answer("py", member_query(self.types,
                                          self.word + "." + self.bit))
        if w is None or b is None:
            return MISSING
        if not b["bitsize"]:
            raise GenError("%s.%s.%s is not a bitfield"
                           % (b["type"], self.word, self.bit))
        return b["bitpos"] - w["bitpos"]


class Enum(Rule):
    """Value of the first enumerator found in the first enum type found."""

    def __init__(self, types, *names, missing=MISSING):
        self.types, self.names, self.missing = types, names, missing

    def queries(self):
        return [("py", ("enum", tuple(self.types)))]

    def value(self, ctx):
        r = ctx.answer("py", ("enum", tuple(self.types)))
        if r is None:
            return self.missing
        for n in self.names:
            if n in r:
                return r[n]
        return self.missing


class BitPos(Rule):
    """Bit position of a bitfield member, counted from the struct start."""

    def __init__(self, types, path):
        self.types, self.path = types, path

    def queries(self):
        return [("py", member_query(self.types, self.path))]

    def value(self, ctx):
        r = ctx.answer("py", member_query(self.types, self.path))
        if r is None:
            return MISSING
        if not r["bitsize"]:
            raise GenError("%s.%s is not a bitfield" % (r["type"], self.path))
        return r["bitpos"]


class FlagBit(Rule):
    """Bit position, from the struct start, of a flag that is a 1-bit
    field in some versions and a whole int or char (0 or 1) in others:
    little endian, the lowest bit of its first byte says it either way."""

    def __init__(self, types, path, src="py"):
        self.types, self.path, self.src = types, path, src

    def queries(self):
        return [(self.src, member_query(self.types, self.path))]

    def value(self, ctx):
        r = ctx.answer(self.src, member_query(self.types, self.path))
        return MISSING if r is None else r["bitpos"]


class Count(Rule):
    """Number of elements of an array member: its size over the element
    type's size."""

    def __init__(self, types, path, elem):
        self.types, self.path, self.elem = types, path, elem

    def queries(self):
        return [("py", member_query(self.types, self.path)),
                ("py", ("sizeof", tuple(self.elem)))]

    def value(self, ctx):
        r = ctx.answer("py", member_query(self.types, self.path))
        e = ctx.answer("py", ("sizeof", tuple(self.elem)))
        if r is None or e is None:
            return MISSING
        return r["size"] // e


class Runtime(Rule):
    """A value the interpreter reports about itself (see layout-probes/facts.py)."""

    def __init__(self, fn):
        self.fn = fn

    def value(self, ctx):
        return self.fn(ctx.facts)


class Fact(Rule):
    """A documented fact keyed on the minor version (see FACTS)."""

    def __init__(self, fn):
        self.fn = fn

    def value(self, ctx):
        return self.fn(ctx.minor)


def FtOnly(rule):
    """`rule` in a free-threaded build, -1 in a default one: default builds
    carry mimalloc's types too (PYTHONMALLOC=mimalloc) but never hold GC
    objects in its heaps."""
    return If(Off(TSIMPL, "mimalloc"), rule)


class FtFact(Rule):
    """A documented fact of free-threaded builds only (see FT_FACTS)."""

    def __init__(self, value):
        self.v = value

    def value(self, ctx):
        return self.v if ctx.facts["free_threaded"] else MISSING


class If(Rule):
    """`then` when `cond` resolves (is not -1), else `otherwise`."""

    def __init__(self, cond, then, otherwise=MISSING):
        self.cond, self.then, self.otherwise = cond, then, otherwise

    def queries(self):
        return self.cond.queries() + self.then.queries()

    def value(self, ctx):
        if self.cond.value(ctx) == MISSING:
            return self.otherwise
        return self.then.value(ctx)


def opcode(name):
    return Runtime(lambda f: f["opmap"].get(name, MISSING))


# C type names, most specific first.  gdb resolves typedefs and tags alike.
RUNTIME = ("_PyRuntimeState",)
INTERP = ("PyInterpreterState", "struct _is")
TSTATE = ("PyThreadState", "struct _ts")
GIL = ("struct _gil_runtime_state",)
GCSTATE = ("struct _gc_runtime_state",)
GCGEN = ("struct gc_generation",)
GCHEAD = ("PyGC_Head",)
CFRAME = ("_PyCFrame", "CFrame")
FRAME = ("PyFrameObject", "struct _frame")
IFRAME = ("_PyInterpreterFrame", "struct _PyInterpreterFrame")
CODE = ("PyCodeObject",)
OBJECT = ("PyObject",)
VAROBJECT = ("PyVarObject",)
TYPE = ("PyTypeObject",)
HEAPTYPE = ("PyHeapTypeObject",)
ASCII = ("PyASCIIObject",)
COMPACT = ("PyCompactUnicodeObject",)
LONG = ("PyLongObject", "struct _longobject")
DICTKEYS = ("PyDictKeysObject", "struct _dictkeysobject")
DICTVALUES = ("PyDictValues", "struct _dictvalues")
GEN = ("PyGenObject",)
FRAMESTATE = ("enum _framestate", "PyFrameState")
FRAMEOWNER = ("enum _frameowner",)
TSIMPL = ("_PyThreadStateImpl",)
MIHEAP = ("mi_heap_t", "struct mi_heap_s")
MIQUEUE = ("mi_page_queue_t", "struct mi_page_queue_s")
MIPAGE = ("mi_page_t", "struct mi_page_s")
MISEG = ("mi_segment_t", "struct mi_segment_s")
MIPOOL = ("mi_abandoned_pool_t", "struct mi_abandoned_pool_s")
FUTURE = ("FutureObj",)
DEQUE = ("dequeobject",)
SIMPLEQUEUE = ("simplequeueobject",)
SOCKET = ("PySocketSockObject",)
SEMLOCK = ("SemLockObject",)
DEQUE_BLOCK = ("block", "struct BLOCK")
TASK = ("TaskObj",)
TRACEBACK = ("PyTracebackObject", "struct _traceback")


# Facts that are C macros or behaviour, visible neither in DWARF (the builds
# carry no macro info) nor from Python.  Where the running interpreter can
# confirm them, VERIFY_SCRIPT does.
FACTS = {
    # How instance attribute dicts are found: the PyObject_GenericGetAttr
    # strategy of each release, as described on enum py_dict_mode in
    # layout.h.  Checked by VERIFY_SCRIPT on a plain class instance.
    "dict_mode": lambda minor: (0 if minor <= 10 else 1 if minor == 11
                                else 2 if minor == 12 else 3),
    # co_lnotab until 3.9, PEP 626 co_linetable in 3.10, PEP 657 location
    # table from 3.11.  Cross-checked against the DWARF members
    # (co_lnotab, co_linetable, co_code_adaptive) in validate().
    "linetable": lambda minor: (0 if minor <= 9 else 1 if minor == 10
                                else 2),
    # Include/object.h: Py_TPFLAGS_MANAGED_DICT (1UL << 4) from 3.11,
    # Py_TPFLAGS_INLINE_VALUES (1UL << 2) from 3.13.  Both are set on a
    # plain class; VERIFY_SCRIPT checks that.
    "tpflags_managed_dict": lambda minor: (1 << 4) if minor >= 11 else 0,
    "tpflags_inline_values": lambda minor: (1 << 2) if minor >= 13 else 0,
    # Include/internal/pycore_stackref.h: Py_TAG_BITS is 3 in 3.14 (default
    # build); localsplus entries are plain PyObject * before 3.14.
    "stackref_tag_mask": lambda minor: 3 if minor >= 14 else 0,
    # Python/ceval.c: 3.11 and 3.12 call every callable that is no
    # unbound method with a NULL in the value-stack slot below it
    # (PUSH_NULL's, LOAD_GLOBAL's, LOAD_ATTR's), over which the call's
    # result is stored.  Before, only LOAD_METHOD's calls have it
    # (CALL_FUNCTION's have none); 3.13+ keep it above the callable.
    "call_null_below": lambda minor: 1 if minor in (11, 12) else 0,
    # Include/internal/pycore_code.h: CO_FAST_HIDDEN 0x10 (3.12+),
    # CO_FAST_LOCAL 0x20, CO_FAST_CELL 0x40, CO_FAST_FREE 0x80 (3.11+);
    # 0 when the version has no such kind.  VERIFY_SCRIPT reads
    # co_localspluskinds of known functions to confirm them.
    "fast_local": lambda minor: 0x20 if minor >= 11 else 0,
    "fast_cell": lambda minor: 0x40 if minor >= 11 else 0,
    "fast_free": lambda minor: 0x80 if minor >= 11 else 0,
    "fast_hidden": lambda minor: 0x10 if minor >= 12 else 0,
}


# Free-threaded builds only: macros of mimalloc and of CPython's use of it
# that DWARF does not carry.
FT_FACTS = {
    # Include/internal/mimalloc/mimalloc/types.h:177-180 on 64-bit:
    # MI_SEGMENT_SLICE_SHIFT = 13 + MI_INTPTR_SHIFT = 16 (64 KiB slices),
    # MI_SEGMENT_SHIFT = 9 + that = 25 (32 MiB segments, so aligned).
    "mi_segment_shift": 25,
    "mi_slice_shift": 16,
    # Include/internal/pycore_mimalloc.h:12-18, an anonymous enum that the
    # DWARF names only through its enumerators: _Py_MIMALLOC_HEAP_GC = 2,
    # _Py_MIMALLOC_HEAP_GC_PRE = 3.
    "mi_heap_gc": 2,
    "mi_heap_gc_pre": 3,
    # Include/internal/pycore_object.h: _PyType_PreHeaderSize is
    # 2 * sizeof(PyObject *) in a free-threaded build (no PyGC_Head).
    "mi_gc_pre_size": 16,
}


RULES = {
    "major": Runtime(lambda f: f["version"][0]),
    "minor": Runtime(lambda f: f["version"][1]),
    "free_threaded": Runtime(lambda f: f["free_threaded"]),

    "rt_size": Size(RUNTIME),
    "rt_interpreters_head": Off(RUNTIME, "interpreters.head"),
    "rt_gilstate_tstate_current": Off(RUNTIME, "gilstate.tstate_current"),
    "rt_gc": Off(RUNTIME, "gc"),

    "is_size": Size(INTERP),
    "is_next": Off(INTERP, "next"),
    "is_tstate_head": Off(INTERP, "tstate_head", "threads.head"),
    "is_id": Off(INTERP, "id"),
    "is_modules": Off(INTERP, "modules", "imports.modules"),
    "is_sysdict": Off(INTERP, "sysdict"),
    "is_gc": Off(INTERP, "gc"),
    # Only the 3.12+ per-interpreter pointer; 3.7 - 3.11 embed the GIL in
    # _PyRuntime.ceval instead.
    "is_ceval_gil": Off(INTERP, "ceval.gil", pointer=True),
    "is_asyncio_tasks_head": Off(INTERP, "asyncio_tasks_head"),

    "gil_last_holder": Off(GIL, "last_holder"),
    "gil_locked": Off(GIL, "locked"),

    "gc_generations": Off(GCSTATE, "generations"),
    "gc_generation_size": Size(GCGEN),
    "gc_gen_head": Off(GCGEN, "head"),
    "gc_head_size": Size(GCHEAD),
    "gc_head_next": Off(GCHEAD, "_gc_next", "gc.gc_next"),
    "gc_head_prev": Off(GCHEAD, "_gc_prev", "gc.gc_prev"),
    "gc_permanent_generation": Off(GCSTATE, "permanent_generation"),

    "rt_allocators_debug": FtOnly(Off(RUNTIME,
                                      "allocators.is_debug_enabled")),
    "is_mi_abandoned_pool": Off(INTERP, "mimalloc.abandoned_pool"),
    "ts_mi_heaps": Off(TSIMPL, "mimalloc.heaps"),
    "ts_mi_initialized": Off(TSIMPL, "mimalloc.initialized"),
    "mi_heap_size": FtOnly(Size(MIHEAP)),
    "mi_heap_pages": FtOnly(Off(MIHEAP, "pages")),
    "mi_heap_queues": FtOnly(Count(MIHEAP, "pages", MIQUEUE)),
    "mi_queue_size": FtOnly(Size(MIQUEUE)),
    "mi_queue_first": FtOnly(Off(MIQUEUE, "first")),
    "mi_heap_delayed_free": FtOnly(Off(MIHEAP, "thread_delayed_free")),
    "mi_heap_page_count": FtOnly(Off(MIHEAP, "page_count")),
    "mi_page_size": FtOnly(Size(MIPAGE)),
    "mi_page_slice_count": FtOnly(Off(MIPAGE, "slice_count")),
    "mi_page_tag_bit": FtOnly(BitPos(MIPAGE, "tag")),
    "mi_page_capacity": FtOnly(Off(MIPAGE, "capacity")),
    "mi_page_reserved": FtOnly(Off(MIPAGE, "reserved")),
    "mi_page_free": FtOnly(Off(MIPAGE, "free")),
    "mi_page_used": FtOnly(Off(MIPAGE, "used")),
    "mi_page_block_size": FtOnly(Off(MIPAGE, "xblock_size")),
    "mi_page_local_free": FtOnly(Off(MIPAGE, "local_free")),
    "mi_page_thread_free": FtOnly(Off(MIPAGE, "xthread_free")),
    "mi_page_heap": FtOnly(Off(MIPAGE, "xheap")),
    "mi_page_next": FtOnly(Off(MIPAGE, "next")),
    "mi_seg_abandoned_next": FtOnly(Off(MISEG, "abandoned_next")),
    "mi_seg_slice_entries": FtOnly(Off(MISEG, "slice_entries")),
    "mi_seg_thread_id": FtOnly(Off(MISEG, "thread_id")),
    "mi_seg_slices": FtOnly(Off(MISEG, "slices")),
    "mi_pool_visited": FtOnly(Off(MIPOOL, "abandoned_visited")),
    "mi_pool_abandoned": FtOnly(Off(MIPOOL, "abandoned")),
    "mi_segment_shift": FtFact(FT_FACTS["mi_segment_shift"]),
    "mi_slice_shift": FtFact(FT_FACTS["mi_slice_shift"]),
    "mi_heap_gc": FtFact(FT_FACTS["mi_heap_gc"]),
    "mi_heap_gc_pre": FtFact(FT_FACTS["mi_heap_gc_pre"]),
    "mi_gc_pre_size": FtFact(FT_FACTS["mi_gc_pre_size"]),
    "ob_gc_bits": Off(OBJECT, "ob_gc_bits"),

    "ts_size": Size(TSTATE),
    "ts_next": Off(TSTATE, "next"),
    "ts_interp": Off(TSTATE, "interp"),
    # 3.11+ PyFrameObject keeps no f_back/f_code chain of its own; the
    # table only names tstate->frame while frame objects form the stack.
    "ts_frame": Off(TSTATE, "frame"),
    # 3.10 already has tstate->cframe, but its CFrame has no current_frame
    # (it only carries use_tracing): only name it when the frame chain
    # starts there.
    "ts_cframe": If(Off(CFRAME, "current_frame"), Off(TSTATE, "cframe")),
    "ts_current_frame": Off(TSTATE, "current_frame"),
    "ts_thread_id": Off(TSTATE, "thread_id"),
    "ts_native_thread_id": Off(TSTATE, "native_thread_id"),
    "ts_dict": Off(TSTATE, "dict"),
    "ts_asyncio_running_loop": Off(("_PyThreadStateImpl",),
                                   "asyncio_running_loop"),
    "ts_asyncio_tasks_head": Off(TSIMPL, "asyncio_tasks_head"),

    "cf_current_frame": Off(CFRAME, "current_frame"),

    "f_size": Size(FRAME),
    # 3.11+ frame objects still have f_back, but it is only a cache of a
    # frame whose _PyInterpreterFrame is gone; the chain is if_previous.
    "f_back": If(Off(FRAME, "f_code"), Off(FRAME, "f_back")),
    "f_code": Off(FRAME, "f_code"),
    "f_lasti": Off(FRAME, "f_lasti"),
    "f_lineno": Off(FRAME, "f_lineno"),
    "f_localsplus": Off(FRAME, "f_localsplus"),
    "f_valuestack": Off(FRAME, "f_valuestack"),
    "f_stacktop": Off(FRAME, "f_stacktop"),
    "f_stackdepth": Off(FRAME, "f_stackdepth"),
    "f_state": Off(FRAME, "f_state"),
    "f_executing": Off(FRAME, "f_executing"),
    "f_frame": Off(FRAME, "f_frame"),
    "f_iblock": Off(FRAME, "f_iblock"),
    "f_blockstack": Off(FRAME, "f_blockstack"),

    "if_size": Size(IFRAME),
    "if_code": Off(IFRAME, "f_code", "f_executable"),
    "if_previous": Off(IFRAME, "previous"),
    "if_funcobj": Off(IFRAME, "f_func", "f_funcobj"),
    "if_locals": Off(IFRAME, "f_locals"),
    "if_frame_obj": Off(IFRAME, "frame_obj"),
    "if_prev_instr": Off(IFRAME, "prev_instr"),
    "if_instr_ptr": Off(IFRAME, "instr_ptr"),
    "if_stacktop": Off(IFRAME, "stacktop"),
    "if_stackpointer": Off(IFRAME, "stackpointer"),
    "if_owner": Off(IFRAME, "owner"),
    "if_is_entry": Off(IFRAME, "is_entry"),
    "if_localsplus": Off(IFRAME, "localsplus"),

    "co_size": Size(CODE),
    "co_argcount": Off(CODE, "co_argcount"),
    "co_posonlyargcount": Off(CODE, "co_posonlyargcount"),
    "co_kwonlyargcount": Off(CODE, "co_kwonlyargcount"),
    "co_nlocals": Off(CODE, "co_nlocals"),
    "co_nlocalsplus": Off(CODE, "co_nlocalsplus"),
    "co_flags": Off(CODE, "co_flags"),
    "co_firstlineno": Off(CODE, "co_firstlineno"),
    "co_stacksize": Off(CODE, "co_stacksize"),
    "co_exceptiontable": Off(CODE, "co_exceptiontable"),
    "co_code": Off(CODE, "co_code"),
    "co_code_adaptive": Off(CODE, "co_code_adaptive"),
    "co_varnames": Off(CODE, "co_varnames"),
    "co_cellvars": Off(CODE, "co_cellvars"),
    "co_freevars": Off(CODE, "co_freevars"),
    "co_localsplusnames": Off(CODE, "co_localsplusnames"),
    "co_localspluskinds": Off(CODE, "co_localspluskinds"),
    "co_filename": Off(CODE, "co_filename"),
    "co_name": Off(CODE, "co_name"),
    "co_qualname": Off(CODE, "co_qualname"),
    "co_lnotab": Off(CODE, "co_lnotab"),
    "co_linetable": Off(CODE, "co_linetable"),
    "co_firsttraceable": Off(CODE, "_co_firsttraceable", "co_firsttraceable"),
    "co_tlbc": Off(CODE, "co_tlbc"),

    "ob_refcnt": Off(OBJECT, "ob_refcnt"),
    "ob_type": Off(OBJECT, "ob_type"),
    "ob_size": Off(VAROBJECT, "ob_size"),

    "tp_name": Off(TYPE, "tp_name"),
    "tp_basicsize": Off(TYPE, "tp_basicsize"),
    "tp_flags": Off(TYPE, "tp_flags"),
    "tp_dictoffset": Off(TYPE, "tp_dictoffset"),
    "tp_base": Off(TYPE, "tp_base"),
    "tp_dict": Off(TYPE, "tp_dict"),
    "tp_mro": Off(TYPE, "tp_mro"),
    "ht_cached_keys": Off(HEAPTYPE, "ht_cached_keys"),
    "ht_qualname": Off(HEAPTYPE, "ht_qualname"),
    # Include/internal/pycore_object.h _PyObject_ManagedDictPointer: the
    # dict slot is the third word before the object (after PyGC_Head's two
    # in the pre-header); free-threaded builds have no PyGC_Head, so it is
    # the first.  Checked by VERIFY_SCRIPT on a plain instance.
    "managed_dict_back": Runtime(lambda f: 0 if f["version"][1] < 11 else
                                8 if f["free_threaded"] else 24),
    "module_dict": Off(("PyModuleObject",), "md_dict"),

    "u_length": Off(ASCII, "length"),
    "u_state": Off(ASCII, "state"),
    "u_state_kind_shift": BitShift(ASCII, "state", "kind"),
    "u_state_compact_shift": BitShift(ASCII, "state", "compact"),
    "u_state_ascii_shift": BitShift(ASCII, "state", "ascii"),
    "u_ascii_size": Size(ASCII),
    "u_compact_size": Size(COMPACT),

    "bytes_sval": Off(("PyBytesObject",), "ob_sval"),

    "long_digits": Off(LONG, "ob_digit", "long_value.ob_digit"),
    "long_tag": Off(LONG, "long_value.lv_tag"),
    "long_digit_bits": Runtime(lambda f: f["bits_per_digit"]),

    "float_fval": Off(("PyFloatObject",), "ob_fval"),
    "tuple_items": Off(("PyTupleObject",), "ob_item"),
    "list_items": Off(("PyListObject",), "ob_item"),

    "dict_used": Off(("PyDictObject",), "ma_used"),
    "dict_keys": Off(("PyDictObject",), "ma_keys"),
    "dict_values": Off(("PyDictObject",), "ma_values"),
    "dk_size": Off(DICTKEYS, "dk_size"),
    "dk_log2_size": Off(DICTKEYS, "dk_log2_size"),
    "dk_log2_index_bytes": Off(DICTKEYS, "dk_log2_index_bytes"),
    "dk_kind": Off(DICTKEYS, "dk_kind"),
    "dk_nentries": Off(DICTKEYS, "dk_nentries"),
    "dk_indices": Off(DICTKEYS, "dk_indices"),
    "dk_entry_size": Size(("PyDictKeyEntry",)),
    "dk_unicode_entry_size": Size(("PyDictUnicodeEntry",)),
    # Before 3.11 ma_values is a bare PyObject ** array: values start at 0.
    "dv_values": If(Size(DICTVALUES), Off(DICTVALUES, "values"), 0),

    "set_used": Off(("PySetObject",), "used"),
    "set_mask": Off(("PySetObject",), "mask"),
    "set_table": Off(("PySetObject",), "table"),
    "set_entry_size": Size(("setentry",)),

    "cell_ref": Off(("PyCellObject",), "ob_ref"),

    "deque_leftblock": Off(DEQUE, "leftblock"),
    "deque_leftindex": Off(DEQUE, "leftindex"),
    "deque_state": Off(DEQUE, "state"),
    "block_data": Off(DEQUE_BLOCK, "data"),
    "block_rightlink": Off(DEQUE_BLOCK, "rightlink"),

    "sq_lst": Off(SIMPLEQUEUE, "lst", src="queue"),
    "sq_lst_pos": Off(SIMPLEQUEUE, "lst_pos", src="queue"),
    "sq_items": Off(SIMPLEQUEUE, "buf.items", src="queue"),
    "sq_get_idx": Off(SIMPLEQUEUE, "buf.get_idx", src="queue"),
    "sq_items_cap": Off(SIMPLEQUEUE, "buf.items_cap", src="queue"),
    "sq_num_items": Off(SIMPLEQUEUE, "buf.num_items", src="queue"),
    "sock_fd": Off(SOCKET, "sock_fd", src="socket"),
    "semlock_handle": Off(SEMLOCK, "handle", src="mp"),
    "semlock_last_tid": Off(SEMLOCK, "last_tid", src="mp"),
    "semlock_count": Off(SEMLOCK, "count", src="mp"),
    "semlock_maxvalue": Off(SEMLOCK, "maxvalue", src="mp"),
    "semlock_kind": Off(SEMLOCK, "kind", src="mp"),

    "gen_size": Size(GEN),
    "gen_frame": Off(GEN, "gi_frame"),
    "gen_running": Off(GEN, "gi_running"),
    "gen_code": Off(GEN, "gi_code"),
    "gen_name": Off(GEN, "gi_name"),
    "gen_qualname": Off(GEN, "gi_qualname"),
    "gen_iframe": Off(GEN, "gi_iframe"),
    "gen_frame_state": Off(GEN, "gi_frame_state"),
    "agen_running_async": Off(("PyAsyncGenObject",), "ag_running_async"),
    "coro_origin": Off(("PyCoroObject",), "cr_origin",
                       "cr_origin_or_finalizer"),

    "fut_loop": Off(FUTURE, "fut_loop", src="aio"),
    "fut_callback0": Off(FUTURE, "fut_callback0", src="aio"),
    "fut_context0": Off(FUTURE, "fut_context0", src="aio"),
    "fut_callbacks": Off(FUTURE, "fut_callbacks", src="aio"),
    "fut_result": Off(FUTURE, "fut_result", src="aio"),
    "fut_state": Off(FUTURE, "fut_state", src="aio"),
    "fut_exception": Off(FUTURE, "fut_exception", src="aio"),
    "fut_log_tb_bit": FlagBit(FUTURE, "fut_log_tb", src="aio"),
    "fut_awaited_by": Off(FUTURE, "fut_awaited_by", src="aio"),
    "fut_size": Size(FUTURE, src="aio"),
    "task_fut_waiter": Off(TASK, "task_fut_waiter", src="aio"),
    "task_coro": Off(TASK, "task_coro", src="aio"),
    "task_name": Off(TASK, "task_name", src="aio"),
    "task_context": Off(TASK, "task_context", src="aio"),
    "task_size": Size(TASK, src="aio"),
    "task_node": Off(TASK, "task_node", src="aio"),
    "task_num_cancels": Off(TASK, "task_num_cancels_requested", src="aio"),
    "taskwakeup_task": Off(("TaskWakeupMethWrapper",), "ww_task", src="aio"),
    "futureiter_future": Off(("futureiterobject",), "future", src="aio"),
    "asend_gen": Off(("PyAsyncGenASend",), "ags_gen"),
    "corowrapper_coro": Off(("PyCoroWrapper",), "cw_coroutine"),
    "method_self": Off(("PyMethodObject",), "im_self"),
    "cfunction_self": Off(("PyCFunctionObject",), "m_self"),
    "descr_method": Off(("PyMethodDescrObject",), "d_method"),
    "weakref_object": Off(("PyWeakReference", "struct _PyWeakReference"),
                          "wr_object"),
    "func_closure": Off(("PyFunctionObject",), "func_closure"),
    "partial_fn": Off(("partialobject",), "fn"),
    "partial_args": Off(("partialobject",), "args"),
    "exc_args": Off(("PyBaseExceptionObject",), "args"),
    "exc_traceback": Off(("PyBaseExceptionObject",), "traceback"),
    "exc_cause": Off(("PyBaseExceptionObject",), "cause"),
    "exc_group_excs": Off(("PyBaseExceptionGroupObject",), "excs"),
    "tb_next": Off(TRACEBACK, "tb_next"),
    "tb_frame": Off(TRACEBACK, "tb_frame"),
    "tb_lasti": Off(TRACEBACK, "tb_lasti"),
    "tb_lineno": Off(TRACEBACK, "tb_lineno"),
    "lock_locked": Off(("lockobject",), "locked", "lock"),
    "rlock_owner": Off(("rlockobject",), "rlock_owner", "lock.thread"),
    "rlock_count": Off(("rlockobject",), "rlock_count", "lock.level"),
    # Python/lock.c: _PyRecursiveMutex_Lock leaves level at 0 when it
    # takes the mutex and adds 1 per re-entry (3.14+).
    "rlock_count_base": Fact(lambda minor: 1 if minor >= 14 else 0),

    "dict_mode": Fact(FACTS["dict_mode"]),
    # Free-threaded builds keep no GC lists (Python/gc_free_threading.c).
    "gc_kind": Runtime(lambda f: 1 if f["free_threaded"] else 0),
    "linetable": Fact(FACTS["linetable"]),
    "tpflags_managed_dict": Fact(FACTS["tpflags_managed_dict"]),
    "tpflags_inline_values": Fact(FACTS["tpflags_inline_values"]),
    "stackref_tag_mask": Fact(FACTS["stackref_tag_mask"]),
    "call_null_below": Fact(FACTS["call_null_below"]),
    "owner_generator": Enum(FRAMEOWNER, "FRAME_OWNED_BY_GENERATOR"),
    "owner_cstack": Enum(FRAMEOWNER, "FRAME_OWNED_BY_CSTACK"),
    "owner_interpreter": Enum(FRAMEOWNER, "FRAME_OWNED_BY_INTERPRETER"),
    # 3.10 keeps the state in the frame (f_state); its FRAME_RETURNED is
    # the "completed" state (UNWINDING 2 and RAISED 3 lie between it and
    # CLEARED).  3.6 - 3.9 have no state enum at all.
    "gs_created": Enum(FRAMESTATE, "FRAME_CREATED", missing=GEN_STATE_NONE),
    "gs_suspended": Enum(FRAMESTATE, "FRAME_SUSPENDED",
                         missing=GEN_STATE_NONE),
    "gs_suspended_yield_from": Enum(FRAMESTATE, "FRAME_SUSPENDED_YIELD_FROM",
                                    missing=GEN_STATE_NONE),
    "gs_executing": Enum(FRAMESTATE, "FRAME_EXECUTING",
                         missing=GEN_STATE_NONE),
    "gs_completed": Enum(FRAMESTATE, "FRAME_COMPLETED", "FRAME_RETURNED",
                         missing=GEN_STATE_NONE),
    "gs_cleared": Enum(FRAMESTATE, "FRAME_CLEARED", missing=GEN_STATE_NONE),
    "fast_local": Fact(FACTS["fast_local"]),
    "fast_cell": Fact(FACTS["fast_cell"]),
    "fast_free": Fact(FACTS["fast_free"]),
    "fast_hidden": Fact(FACTS["fast_hidden"]),
    "co_flags_generator": Runtime(lambda f: f["co"]["CO_GENERATOR"]),
    "co_flags_coroutine": Runtime(lambda f: f["co"]["CO_COROUTINE"]),
    "co_flags_async_generator":
        Runtime(lambda f: f["co"]["CO_ASYNC_GENERATOR"]),
    "co_flags_iterable_coroutine":
        Runtime(lambda f: f["co"]["CO_ITERABLE_COROUTINE"]),
    "op_yield_from": opcode("YIELD_FROM"),
    "op_resume": opcode("RESUME"),
    "op_resume_quick": opcode("RESUME_QUICK"),
    "op_instrumented_resume": opcode("INSTRUMENTED_RESUME"),
    "op_resume_check": opcode("RESUME_CHECK"),
    "op_extended_arg": opcode("EXTENDED_ARG"),
    "op_setup_with": opcode("SETUP_WITH"),
    "op_setup_async_with": opcode("SETUP_ASYNC_WITH"),
    "op_before_with": opcode("BEFORE_WITH"),
    "op_before_async_with": opcode("BEFORE_ASYNC_WITH"),
    "op_load_special": opcode("LOAD_SPECIAL"),
    "op_push_exc_info": opcode("PUSH_EXC_INFO"),
    "op_with_except_start": opcode("WITH_EXCEPT_START"),
}


# --------------------------------------------------------------------------
# gdb side: answers a batch of queries about one ELF file's DWARF.

GDB_SCRIPT = os.path.join(PROBES, "dwarf_gdb.py")


def run_gdb(elf, queries, tmpdir):
    """Answer `queries` (a list of tuples) from the DWARF of `elf`."""
    base = os.path.join(tmpdir, os.path.basename(elf))
    qpath, apath = base + ".in", base + ".out"
    with open(qpath, "w") as f:
        json.dump([list(q) for q in queries], f)
    env = dict(os.environ, GEN_LAYOUTS_IN=qpath, GEN_LAYOUTS_OUT=apath)
    # No auto-loaded scripts and no debuginfod downloads: only the file's
    # own DWARF counts.
    cmd = ["gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off",
           "-iex", "set debuginfod enabled off",
           "-ex", "source " + GDB_SCRIPT, elf]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=300)
    if p.returncode != 0 or not os.path.exists(apath):
        raise GenError("gdb failed on %s:\n%s%s" % (elf, p.stdout, p.stderr))
    with open(apath) as f:
        out = json.load(f)
    if not out["build_id"]:
        raise GenError("%s has no GNU build id" % elf)
    return out["build_id"], dict(zip(queries, out["answers"]))


# --------------------------------------------------------------------------
# Interpreter side.  Both scripts run under the target interpreter, so they
# must stay valid Python 3.6.

FACTS_SCRIPT = os.path.join(PROBES, "facts.py")

# Reads the interpreter's own objects at the derived offsets and prints a
# JSON list of mismatches.  L is the candidate table.
VERIFY_SCRIPT = os.path.join(PROBES, "verify.py")


def read_probe(path):
    with open(path) as f:
        return f.read()


def run_python(exe, script, stdin=None):
    """Run the source text `script` under `exe`; its stdout is JSON."""
    p = subprocess.run([exe, "-I", "-c", script], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        raise GenError("%s failed:\n%s" % (exe, p.stderr))
    return json.loads(p.stdout)


# --------------------------------------------------------------------------
# Installations

class Install:
    def __init__(self, prefix, exe, version, free_threaded=0):
        self.prefix, self.exe = prefix, exe
        self.version = version            # "3.X.Y"
        self.minor = int(version.split(".")[1])
        self.free_threaded = free_threaded
        # Tables are keyed by minor version and build: 3.14 and 3.14t are
        # two entries.
        self.key = (self.minor, free_threaded)
        x = "3.%d" % self.minor + ("t" if free_threaded else "")
        libs = sorted(glob.glob(os.path.join(prefix, "lib",
                                             "libpython%s*.so.1.0" % x)))
        # A static build keeps everything in the executable.
        self.libpython = libs[0] if libs else exe
        # Each extension module's own file; a built-in one (3.6 has no
        # _queue: its queries find nothing) lives in the interpreter.
        self.elf = {"py": self.libpython}
        for src, mod in EXTENSIONS:
            mods = sorted(glob.glob(os.path.join(
                prefix, "lib", "python" + x, "lib-dynload", mod + "*.so")))
            self.elf[src] = mods[0] if mods else self.libpython


def find_pyenv():
    best = {}
    for d in glob.glob(os.path.join(PYENV_VERSIONS, "3.*")):
        m = re.fullmatch(r"3\.(\d+)\.(\d+)", os.path.basename(d))
        if not m:
            continue        # free-threaded, debug or pre-release builds
        minor, micro = int(m.group(1)), int(m.group(2))
        exe = os.path.join(d, "bin", "python3.%d" % minor)
        if minor not in PYENV_MINORS or not os.access(exe, os.X_OK):
            continue
        if minor not in best or micro > best[minor][0]:
            best[minor] = (micro, Install(d, exe, "3.%d.%d" % (minor, micro)))
    return {(k, 0): v[1] for k, v in best.items()}


def install_from_prefix(prefix):
    exes = sorted(glob.glob(os.path.join(prefix, "bin", "python3.*")))
    # python3.14t before python3.14: a free-threaded prefix has both.
    exes = [e for e in exes if re.fullmatch(r"python3\.\d+t",
                                            os.path.basename(e))] + \
        [e for e in exes if re.fullmatch(r"python3\.\d+",
                                         os.path.basename(e))]
    if not exes:
        raise GenError("no bin/python3.X under %s" % prefix)
    ver = run_python(exes[0], "import sys, json, sysconfig; "
                     "json.dump(list(sys.version_info[:3]) + "
                     "[int(sysconfig.get_config_var('Py_GIL_DISABLED') "
                     "or 0)], sys.stdout)")
    return Install(prefix, exes[0], "%d.%d.%d" % tuple(ver[:3]), ver[3])


# --------------------------------------------------------------------------
# Building one table

class Context:
    def __init__(self, minor, answers, facts):
        self.minor, self.answers, self.facts = minor, answers, facts

    def answer(self, src, query):
        try:
            return self.answers[src][query]
        except KeyError:
            raise GenError("internal: query %r was not collected" % (query,))


def build_table(inst, fields, tmpdir):
    srcs = ["py"] + [src for src, _ in EXTENSIONS]
    queries = {src: [] for src in srcs}
    for _, name in fields:
        for src, q in RULES[name].queries():
            if q not in queries[src]:
                queries[src].append(q)
    answers, ids = {}, {}
    with concurrent.futures.ThreadPoolExecutor(len(srcs) + 1) as pool:
        jobs = {src: pool.submit(run_gdb, inst.elf[src], queries[src],
                                 os.path.join(tmpdir, src))
                for src in srcs}
        facts = pool.submit(run_python, inst.exe, read_probe(FACTS_SCRIPT))
        for src in srcs:
            ids[src], answers[src] = jobs[src].result()
        facts = facts.result()
    if facts["version"][:2] != [3, inst.minor] or \
            facts["free_threaded"] != inst.free_threaded:
        raise GenError("%s reports version %r" % (inst.exe, facts["version"]))
    ctx = Context(inst.minor, answers, facts)
    table = {}
    for _, name in fields:
        table[name] = RULES[name].value(ctx)
    check_bounds(answers)
    validate(inst, table)
    bad = run_python(inst.exe, read_probe(VERIFY_SCRIPT),
                     json.dumps(table))
    if bad:
        raise GenError("%s: the derived table does not match the running "
                       "interpreter:\n  %s" % (inst.version, "\n  ".join(bad)))
    read = [(inst.elf[src], ids[src]) for src in srcs]
    source = SOURCE_SEP.join(
        ["CPython " + inst.version +
         (" (free-threaded)" if inst.free_threaded else "")] +
        ["%s build-id %s" % (os.path.basename(elf), bid)
         for i, (elf, bid) in enumerate(read)
         if elf not in [e for e, _ in read[:i]]])
    return table, source


def check_bounds(answers):
    for src in answers:
        for q, r in answers[src].items():
            if q[0] == "member" and r is not None:
                end = r["bitpos"] // 8 + (0 if r["bitsize"] else r["size"])
                if end > r["outer_size"]:
                    raise GenError("%s.%s ends at %d, past sizeof %d"
                                   % (r["type"], q[2], end, r["outer_size"]))


def validate(inst, t):
    """Consistency rules between fields; a failure means a rule or a fact
    no longer matches the build."""
    v = version_name(inst.key)
    problems = []

    def need(cond, msg):
        if not cond:
            problems.append(msg)

    has = lambda f: t[f] != MISSING
    need(t["linetable"] != 0 or has("co_lnotab"),
         "lnotab kind without co_lnotab")
    need(t["linetable"] != 1 or (has("co_linetable")
                                 and not has("co_code_adaptive")),
         "3.10 line table kind does not match the code object")
    need(t["linetable"] != 2 or has("co_code_adaptive"),
         "location table kind without co_code_adaptive")
    need((t["dict_mode"] == 0) == (not has("dk_log2_size")),
         "dict_mode does not match the dict keys layout")
    need(t["dv_values"] >= 0, "PyDictValues without values")
    need(has("f_frame") == has("if_owner"), "f_frame without frame owner")
    need(has("if_owner") == has("owner_generator"),
         "FRAME_OWNED_BY_* enum missing from DWARF")
    state_kept = has("gen_frame_state") or has("f_state")
    need(state_kept == (t["gs_created"] != GEN_STATE_NONE),
         "frame state enum missing from DWARF")
    need(has("ts_frame") or has("ts_cframe") or has("ts_current_frame"),
         "no way from a thread to its frame")
    need(has("is_tstate_head") and has("is_modules"), "interpreter state")
    need(has("rt_size") or inst.minor == 6, "no _PyRuntimeState")
    if t["gc_kind"] == 0:
        need(has("gc_head_next") and has("gc_generation_size"), "GC lists")
    else:
        lack = [f for f in t if (f.startswith("mi_") or f in (
            "ts_mi_heaps", "ts_mi_initialized", "is_mi_abandoned_pool",
            "ob_gc_bits", "rt_allocators_debug", "co_tlbc")) and not has(f)]
        need(not lack, "free-threaded build without " + ", ".join(lack))
    need(t["free_threaded"] == inst.free_threaded, "free_threaded")
    need(has("is_gc") or has("rt_gc") or inst.minor == 6, "no GC state")
    for f in ("u_state_kind_shift", "u_state_compact_shift",
              "u_state_ascii_shift"):
        need(0 <= t[f] < 32, f)
    need(has("fut_state") and has("task_coro") and has("task_fut_waiter"),
         "_asyncio layouts")
    if problems:
        raise GenError("%s: %s" % (v, "; ".join(problems)))


# --------------------------------------------------------------------------
# The C file

# One table as written by format_block(); `source` is its comment.
BLOCK_RE = re.compile(
    r"^/\*\n \* CPython (?P<minor>3\.(?P<n>\d+))\.(?P<source>.*?)\n \*/\n"
    r"static const struct py_layout layout_3_(?P=n)(?P<t>t?) = \{\n"
    r".*?^\};\n", re.M | re.S)


def format_value(ctype, name, value, enums):
    if ctype != "int":
        if value not in enums[ctype]:
            raise GenError("%s: %d is not a value of %s"
                           % (name, value, ctype))
        return enums[ctype][value]
    if name.startswith("gs_") and value == GEN_STATE_NONE:
        return GEN_STATE_NONE_NAME
    if name.startswith("tpflags_") and value > 0:
        return "0x%x" % value
    if name.startswith("fast_") and value > 0:
        return "0x%02x" % value
    return str(value)


def table_name(key):
    return "layout_3_%d%s" % (key[0], "t" if key[1] else "")


def version_name(key):
    return "3.%d%s" % (key[0], "t" if key[1] else "")


def format_block(key, source, table, fields, enums):
    lines = ["/*"]
    lines += [" * " + part for part in source.split(SOURCE_SEP)]
    lines += [" */", "static const struct py_layout %s = {" % table_name(key)]
    for ctype, name in fields:
        lines.append("\t.%s = %s," % (name, format_value(ctype, name,
                                                         table[name], enums)))
    lines.append("};")
    return "\n".join(lines) + "\n"


def format_file(blocks):
    """blocks: {(minor, free_threaded): (source, text)}"""
    minors = sorted(blocks)
    versions = [blocks[m][0].split(SOURCE_SEP)[0].split()[1]
                + ("t" if m[1] else "") for m in minors]
    out = ["/*",
           " * generated by tools/gen-layouts.py from CPython",
           " * %s" % ", ".join(versions),
           " * (the build ids of the files read above each table); do not"
           " edit.",
           " * tests/test_layouts.py checks that it is up to date.",
           " */",
            '#include "readers/layout.h"',
            "",
            "#include <stddef.h>",
            "",
            '#include "common/banned.h"',
            ""]
    for m in minors:
        out.append(blocks[m][1])
    out += ["const struct py_layout *py_layout_for(int major, int minor,",
            "\t\t\t\t      int free_threaded)",
            "{",
            "\tstatic const struct py_layout *const all[] = {"]
    out += ["\t\t&%s," % table_name(m) for m in minors]
    out += ["\t};",
            "\tsize_t i;",
            "",
            "\tfor (i = 0; i < sizeof(all) / sizeof(all[0]); i++)",
            "\t\tif (all[i]->major == major && all[i]->minor == minor &&",
            "\t\t    all[i]->free_threaded == free_threaded)",
            "\t\t\treturn all[i];",
            "\treturn NULL;",
            "}"]
    return "\n".join(out) + "\n"


def committed_blocks(text, fields):
    blocks = {}
    for m in BLOCK_RE.finditer(text):
        block = m.group(0)
        missing = [n for _, n in fields
                   if not re.search(r"^\t\.%s = " % n, block, re.M)]
        source = "CPython " + m.group("minor") + "." + m.group("source")
        source = SOURCE_SEP.join(source.split("\n * "))
        blocks[(int(m.group("n")), 1 if m.group("t") else 0)] = \
            (source, block, missing)
    return blocks


# --------------------------------------------------------------------------

BUILD_ID_LINE = re.compile(r"^ \* \S+ build-id [0-9a-f]+$", re.M)


def without_build_ids(text):
    return BUILD_ID_LINE.sub(" * (build-id)", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed file, exit 1 on a diff")
    ap.add_argument("--prefix", action="append", default=[], metavar="DIR",
                    help="also read the CPython installed under DIR")
    ap.add_argument("--output", default=OUTPUT, help=argparse.SUPPRESS)
    args = ap.parse_args()

    try:
        fields, enums = parse_header(HEADER)
        names = [n for _, n in fields]
        unruled = [n for n in names if n not in RULES]
        stale = [n for n in RULES if n not in names]
        if unruled:
            raise GenError("no rule for struct py_layout member(s): %s"
                           % ", ".join(unruled))
        if stale:
            raise GenError("rule(s) for member(s) not in layout.h: %s"
                           % ", ".join(stale))
        if not any(os.access(os.path.join(d, "gdb"), os.X_OK)
                   for d in os.environ.get("PATH", "").split(os.pathsep)):
            raise GenError("gdb is not installed (apt-get install gdb)")

        installs = find_pyenv()
        for p in args.prefix:
            inst = install_from_prefix(p)
            installs[inst.key] = inst

        try:
            with open(args.output) as f:
                old_text = f.read()
        except FileNotFoundError:
            old_text = ""
        old = committed_blocks(old_text, fields)

        blocks = {}
        with tempfile.TemporaryDirectory(prefix="gen-layouts.") as tmp:
            with concurrent.futures.ThreadPoolExecutor(
                    max(2, os.cpu_count() or 2)) as pool:
                jobs = {}
                for minor, inst in sorted(installs.items()):
                    d = os.path.join(tmp, table_name(minor))
                    for src in ["py"] + [e for e, _ in EXTENSIONS]:
                        os.makedirs(os.path.join(d, src))
                    jobs[minor] = pool.submit(build_table, inst, fields, d)
                errors = []
                for minor, job in sorted(jobs.items()):
                    try:
                        table, source = job.result()
                    except GenError as e:
                        errors.append(str(e))
                        continue
                    blocks[minor] = (source, format_block(
                        minor, source, table, fields, enums))
                if errors:
                    raise GenError("\n".join(errors))
        for minor, (source, block, missing) in sorted(old.items()):
            if minor in blocks:
                continue
            if missing:
                raise GenError("%s is not installed here and its committed "
                               "table lacks %s"
                               % (version_name(minor), ", ".join(missing)))
            print("gen-layouts: %s is not installed here; keeping the "
                  "committed table (%s)"
                  % (version_name(minor), source.split(SOURCE_SEP)[0]),
                  file=sys.stderr)
            blocks[minor] = (source, block)
        if not blocks:
            raise GenError("no CPython builds found")
        new_text = format_file(blocks)
    except GenError as e:
        print("gen-layouts: %s" % e, file=sys.stderr)
        return 2

    if args.check:
        if new_text == old_text:
            return 0
        # Another build of the same source (a new machine's) has other
        # build-ids but the same layouts: the comments naming the build
        # read are provenance, the tables are what must agree.
        if without_build_ids(new_text) == without_build_ids(old_text):
            print("gen-layouts: tables current (read from builds whose "
                  "build-ids differ from the committed comments)",
                  file=sys.stderr)
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            old_text.splitlines(True), new_text.splitlines(True),
            "committed/" + os.path.relpath(args.output, ROOT),
            "regenerated/" + os.path.relpath(args.output, ROOT)))
        print("gen-layouts: %s is stale; run tools/gen-layouts.py"
              % os.path.relpath(args.output, ROOT), file=sys.stderr)
        return 1
    if new_text != old_text:
        with open(args.output, "w") as f:
            f.write(new_text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
