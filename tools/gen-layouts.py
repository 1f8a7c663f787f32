#!/usr/bin/python3
"""Generate readers/layouts_generated.c from the installed CPython builds.

For every installed pyenv CPython 3.6 - 3.13 (and every --prefix DIR), each
field of struct py_layout (readers/layout.h) is derived from

  * the DWARF debug info of libpython (or the python executable when the
    build is static) and of the _asyncio extension, read through gdb's
    Python API (gdb -batch -nx), which handles DWARF 4 and 5 alike;
  * the interpreter itself, for values that exist only as C macros but
    are visible from Python (opcode numbers, CO_* flags, digit size);
  * a short table of documented facts (FACTS below) for the few macros and
    behaviours that neither source exposes.

Each table is then verified against the running interpreter: a probe run
with that interpreter reads its own objects through ctypes at the derived
offsets and compares with what Python reports (VERIFY_SCRIPT).

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
PYENV_VERSIONS = os.path.join(os.environ.get("PYENV_ROOT", "/root/.pyenv"),
                              "versions")
PYENV_MINORS = range(6, 14)

MISSING = -1
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


class Runtime(Rule):
    """A value the interpreter reports about itself (see FACTS_SCRIPT)."""

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
FUTURE = ("FutureObj",)
TASK = ("TaskObj",)


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
    # Include/internal/pycore_code.h: CO_FAST_HIDDEN 0x10 (3.12+),
    # CO_FAST_LOCAL 0x20, CO_FAST_CELL 0x40, CO_FAST_FREE 0x80 (3.11+);
    # 0 when the version has no such kind.  VERIFY_SCRIPT reads
    # co_localspluskinds of known functions to confirm them.
    "fast_local": lambda minor: 0x20 if minor >= 11 else 0,
    "fast_cell": lambda minor: 0x40 if minor >= 11 else 0,
    "fast_free": lambda minor: 0x80 if minor >= 11 else 0,
    "fast_hidden": lambda minor: 0x10 if minor >= 12 else 0,
}


RULES = {
    "major": Runtime(lambda f: f["version"][0]),
    "minor": Runtime(lambda f: f["version"][1]),

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

    "gil_last_holder": Off(GIL, "last_holder"),
    "gil_locked": Off(GIL, "locked"),

    "gc_generations": Off(GCSTATE, "generations"),
    "gc_generation_size": Size(GCGEN),
    "gc_gen_head": Off(GCGEN, "head"),
    "gc_head_size": Size(GCHEAD),
    "gc_head_next": Off(GCHEAD, "_gc_next", "gc.gc_next"),
    "gc_head_prev": Off(GCHEAD, "_gc_prev", "gc.gc_prev"),
    "gc_permanent_generation": Off(GCSTATE, "permanent_generation"),

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
    "fut_awaited_by": Off(FUTURE, "fut_awaited_by", src="aio"),
    "fut_size": Size(FUTURE, src="aio"),
    "task_fut_waiter": Off(TASK, "task_fut_waiter", src="aio"),
    "task_coro": Off(TASK, "task_coro", src="aio"),
    "task_name": Off(TASK, "task_name", src="aio"),
    "task_context": Off(TASK, "task_context", src="aio"),
    "task_size": Size(TASK, src="aio"),
    "task_node": Off(TASK, "task_node", src="aio"),
    "taskwakeup_task": Off(("TaskWakeupMethWrapper",), "ww_task", src="aio"),
    "futureiter_future": Off(("futureiterobject",), "future", src="aio"),
    "asend_gen": Off(("PyAsyncGenASend",), "ags_gen"),
    "corowrapper_coro": Off(("PyCoroWrapper",), "cw_coroutine"),
    "method_self": Off(("PyMethodObject",), "im_self"),
    "cfunction_self": Off(("PyCFunctionObject",), "m_self"),
    "weakref_object": Off(("PyWeakReference", "struct _PyWeakReference"),
                          "wr_object"),
    "func_closure": Off(("PyFunctionObject",), "func_closure"),
    "partial_fn": Off(("partialobject",), "fn"),
    "partial_args": Off(("partialobject",), "args"),

    "dict_mode": Fact(FACTS["dict_mode"]),
    "linetable": Fact(FACTS["linetable"]),
    "tpflags_managed_dict": Fact(FACTS["tpflags_managed_dict"]),
    "tpflags_inline_values": Fact(FACTS["tpflags_inline_values"]),
    "stackref_tag_mask": Fact(FACTS["stackref_tag_mask"]),
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
}


# --------------------------------------------------------------------------
# gdb side: answers a batch of queries about one ELF file's DWARF.

GDB_SCRIPT = r'''
import gdb, json, os

CODES = {}
for _n in dir(gdb):
    if _n.startswith("TYPE_CODE_"):
        CODES.setdefault(getattr(gdb, _n), _n[len("TYPE_CODE_"):])
AGGREGATE = (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION)


def find_type(names):
    for n in names:
        try:
            t = gdb.lookup_type(n)
        except gdb.error:
            continue
        s = t.strip_typedefs()
        if s.code in AGGREGATE and s.sizeof == 0 and not s.fields():
            continue        # a declaration without a definition
        return n, s
    return None, None


def find_member(t, name):
    """(bit position, field) of member `name`, looking through anonymous
    struct and union members."""
    for f in t.fields():
        if f.name == name:
            return f.bitpos, f
    for f in t.fields():
        ft = f.type.strip_typedefs()
        if not f.name and ft.code in AGGREGATE:
            r = find_member(ft, name)
            if r is not None:
                return f.bitpos + r[0], r[1]
    return None


def member(names, path):
    tname, t = find_type(names)
    if t is None or t.code not in AGGREGATE:
        return None
    bitpos, cur, f = 0, t, None
    for part in path.split("."):
        if cur.code not in AGGREGATE:
            return None
        r = find_member(cur, part)
        if r is None:
            return None
        bitpos += r[0]
        f = r[1]
        cur = f.type.strip_typedefs()
    return {"type": tname, "bitpos": bitpos, "bitsize": f.bitsize,
            "code": CODES.get(cur.code, str(cur.code)), "size": cur.sizeof,
            "outer_size": t.sizeof}


def answer(q):
    kind = q[0]
    if kind == "sizeof":
        tname, t = find_type(q[1])
        return None if t is None else t.sizeof
    if kind == "member":
        return member(q[1], q[2])
    if kind == "enum":
        tname, t = find_type(q[1])
        if t is None or t.code != gdb.TYPE_CODE_ENUM:
            return None
        return {f.name: int(f.enumval) for f in t.fields()}
    raise ValueError(kind)


with open(os.environ["GEN_LAYOUTS_IN"]) as f:
    queries = json.load(f)
objfile = gdb.objfiles()[0] if gdb.objfiles() else None
out = {"build_id": objfile.build_id if objfile else None,
       "answers": [answer(q) for q in queries]}
with open(os.environ["GEN_LAYOUTS_OUT"], "w") as f:
    json.dump(out, f)
'''


def run_gdb(elf, queries, tmpdir):
    """Answer `queries` (a list of tuples) from the DWARF of `elf`."""
    base = os.path.join(tmpdir, os.path.basename(elf))
    script, qpath, apath = base + ".gdb.py", base + ".in", base + ".out"
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)
    with open(qpath, "w") as f:
        json.dump([list(q) for q in queries], f)
    env = dict(os.environ, GEN_LAYOUTS_IN=qpath, GEN_LAYOUTS_OUT=apath)
    # No auto-loaded scripts and no debuginfod downloads: only the file's
    # own DWARF counts.
    cmd = ["gdb", "-batch", "-nx", "-q", "-iex", "set auto-load off",
           "-iex", "set debuginfod enabled off",
           "-ex", "source " + script, elf]
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

FACTS_SCRIPT = r'''
import inspect, json, opcode, sys
ops = {}
for src in ("opcode.opmap", "dis._all_opmap", "opcode._specialized_opmap"):
    mod, attr = src.split(".")
    try:
        ops.update(getattr(__import__(mod), attr))
    except AttributeError:
        pass
json.dump({
    "version": list(sys.version_info[:3]),
    "hexversion": sys.hexversion,
    "bits_per_digit": sys.int_info.bits_per_digit,
    "opmap": ops,
    "co": {n: getattr(inspect, n) for n in (
        "CO_GENERATOR", "CO_COROUTINE", "CO_ASYNC_GENERATOR",
        "CO_ITERABLE_COROUTINE")},
}, sys.stdout)
'''

# Reads the interpreter's own objects at the derived offsets and prints a
# JSON list of mismatches.  L is the candidate table.
VERIFY_SCRIPT = r'''
import asyncio, ctypes, gc, json, sys, threading, types, weakref
L = json.load(sys.stdin)
bad = []
P = ctypes.c_void_p


def check(what, got, want):
    if got != want:
        bad.append("%s: read %r, expected %r" % (what, got, want))


def rd(ctype, addr):
    return ctype.from_address(addr).value


def ptr(addr):
    return rd(P, addr) or 0


def obj_at(addr):
    p = ptr(addr)
    return ctypes.cast(p, ctypes.py_object).value if p else None


def off(name):
    v = L[name]
    return None if v == -1 else v


# PyObject, PyVarObject, PyTypeObject
lst = [1, 2, 3]
check("ob_type", ptr(id(lst) + L["ob_type"]), id(list))
check("ob_refcnt", rd(ctypes.c_uint32, id(lst) + L["ob_refcnt"]),
      sys.getrefcount(lst) - 1)
tup = (lst, "x")
check("ob_size", rd(ctypes.c_ssize_t, id(tup) + L["ob_size"]), 2)
check("tp_name", ctypes.string_at(ptr(id(int) + L["tp_name"])), b"int")
class Plain:
    def __init__(self):
        self.first = "first-value"
        self.second = 2
inst = Plain()
for T in (int, Plain, types.FunctionType):
    check("tp_basicsize", rd(ctypes.c_ssize_t, id(T) + L["tp_basicsize"]),
          T.__basicsize__)
    check("tp_flags", rd(ctypes.c_ulong, id(T) + L["tp_flags"]), T.__flags__)
    check("tp_dictoffset", rd(ctypes.c_ssize_t, id(T) + L["tp_dictoffset"]),
          T.__dictoffset__)
    check("tp_base", ptr(id(T) + L["tp_base"]), id(T.__base__))
    check("tp_mro", ptr(id(T) + L["tp_mro"]), id(T.__mro__))
for flag in ("tpflags_managed_dict", "tpflags_inline_values"):
    if L[flag]:
        check(flag + " set on a plain class", bool(Plain.__flags__ & L[flag]),
              True)
check("ht_cached_keys non-NULL", ptr(id(Plain) + L["ht_cached_keys"]) != 0,
      True)

# Instance attributes through dict_mode
mode = L["dict_mode"]
if mode == 0:
    check("tp_dictoffset dict", obj_at(id(inst) + Plain.__dictoffset__),
          inst.__dict__)
else:
    if mode == 1:
        values = ptr(id(inst) - 32)
    elif mode == 2:
        word = ptr(id(inst) - 24)
        check("3.12 dict-or-values word is odd", word & 1, 1)
        values = word + 1
    else:
        values = id(inst) + Plain.__basicsize__
    check("first inline value", obj_at(values + L["dv_values"]),
          "first-value")

# Unicode
def ustate(s):
    st = rd(ctypes.c_uint32, id(s) + L["u_state"])
    return ((st >> L["u_state_kind_shift"]) & 7,
            (st >> L["u_state_compact_shift"]) & 1,
            (st >> L["u_state_ascii_shift"]) & 1)
a = "".join(["asc", "ii"])
u = "".join(["\u20ac", "uro"])
check("u_length", rd(ctypes.c_ssize_t, id(u) + L["u_length"]), 4)
check("ascii state", ustate(a), (1, 1, 1))
check("ascii data", ctypes.string_at(id(a) + L["u_ascii_size"], 5), b"ascii")
check("ucs2 state", ustate(u), (2, 1, 0))
check("ucs2 data", ctypes.string_at(id(u) + L["u_compact_size"], 8),
      u.encode("utf-16-le"))

# Numbers, bytes, containers
b = b"bytes!"
check("bytes_sval", ctypes.string_at(id(b) + L["bytes_sval"], 6), b)
n = (1 << 40) + 5
bits = L["long_digit_bits"]
mask = (1 << bits) - 1
check("long digit 0", rd(ctypes.c_uint32, id(n) + L["long_digits"]),
      n & mask)
check("long digit 1", rd(ctypes.c_uint32, id(n) + L["long_digits"] + 4),
      n >> bits)
if off("long_tag") is not None:
    tag = rd(ctypes.c_size_t, id(n) + L["long_tag"])
    check("lv_tag digit count", tag >> 3, 2)
else:
    check("long ob_size", rd(ctypes.c_ssize_t, id(n) + L["ob_size"]), 2)
fl = float("2.5")
check("float_fval", rd(ctypes.c_double, id(fl) + L["float_fval"]), 2.5)
check("tuple_items", obj_at(id(tup) + L["tuple_items"] + 8), "x")
check("list_items", obj_at(ptr(id(lst) + L["list_items"]) + 16), 3)

d = {"k1": "v1", "k2": "v2"}
check("dict_used", rd(ctypes.c_ssize_t, id(d) + L["dict_used"]), 2)
check("dict_values NULL (combined)", ptr(id(d) + L["dict_values"]), 0)
keys = ptr(id(d) + L["dict_keys"])
check("dk_nentries", rd(ctypes.c_ssize_t, keys + L["dk_nentries"]), 2)
if off("dk_size") is not None:
    size = rd(ctypes.c_ssize_t, keys + L["dk_size"])
    index_bytes = size   # 1-byte indices for tables below 256 slots
else:
    size = 1 << rd(ctypes.c_uint8, keys + L["dk_log2_size"])
    index_bytes = 1 << rd(ctypes.c_uint8, keys + L["dk_log2_index_bytes"])
    check("dk_kind unicode", rd(ctypes.c_uint8, keys + L["dk_kind"]), 1)
check("dk size", size, 8)
entries = keys + L["dk_indices"] + index_bytes
if off("dk_unicode_entry_size") is not None:
    esize, key_at = L["dk_unicode_entry_size"], 0
else:
    esize, key_at = L["dk_entry_size"], 8
check("second dict key", obj_at(entries + esize + key_at), "k2")

s = {10, 20, 30}
check("set_used", rd(ctypes.c_ssize_t, id(s) + L["set_used"]), 3)
check("set_mask", rd(ctypes.c_ssize_t, id(s) + L["set_mask"]), 7)
table = ptr(id(s) + L["set_table"])
found = set()
for i in range(8):
    k = ptr(table + i * L["set_entry_size"])
    if k in (id(10), id(20), id(30)):
        found.add(k)
check("set entries", len(found), 3)

def outer(arg):
    cellvar = 1
    plain = 0
    def inner():
        return arg + cellvar
    return inner
inner = outer(5)
check("cell_ref", obj_at(id(inner.__closure__[0]) + L["cell_ref"]),
      inner.__closure__[0].cell_contents)

# Code objects
c = outer.__code__
check("co_argcount", rd(ctypes.c_int, id(c) + L["co_argcount"]), 1)
check("co_kwonlyargcount", rd(ctypes.c_int, id(c) + L["co_kwonlyargcount"]),
      0)
check("co_nlocals", rd(ctypes.c_int, id(c) + L["co_nlocals"]), c.co_nlocals)
check("co_flags", rd(ctypes.c_int, id(c) + L["co_flags"]), c.co_flags)
check("co_firstlineno", rd(ctypes.c_int, id(c) + L["co_firstlineno"]),
      c.co_firstlineno)
check("co_filename", obj_at(id(c) + L["co_filename"]), c.co_filename)
check("co_name", obj_at(id(c) + L["co_name"]), "outer")
if off("co_posonlyargcount") is not None:
    check("co_posonlyargcount",
          rd(ctypes.c_int, id(c) + L["co_posonlyargcount"]), 0)
if off("co_qualname") is not None:
    check("co_qualname", obj_at(id(inner.__code__) + L["co_qualname"]),
          "outer.<locals>.inner")
for f in ("co_code", "co_varnames", "co_cellvars", "co_freevars",
          "co_lnotab", "co_linetable"):
    if off(f) is not None:
        check(f, obj_at(id(c) + L[f]), getattr(c, f))
if off("co_code_adaptive") is not None:
    check("co_code_adaptive", ctypes.string_at(id(c) + L["co_code_adaptive"],
                                               len(c.co_code)),
          c._co_code_adaptive)
if off("co_localspluskinds") is not None:
    def kinds(code):
        names = obj_at(id(code) + L["co_localsplusnames"])
        check("co_nlocalsplus",
              rd(ctypes.c_int, id(code) + L["co_nlocalsplus"]), len(names))
        raw = obj_at(id(code) + L["co_localspluskinds"])
        return dict(zip(names, raw))
    k = kinds(c)
    # 3.14 adds argument bits (0x02 positional, 0x04 keyword, 0x08
    # variadic) below the kind bits we read: compare the kind bits only.
    check("CO_FAST arg cell", k["arg"] & 0xF0, L["fast_local"] | L["fast_cell"])
    check("CO_FAST cell", k["cellvar"], L["fast_cell"])
    check("CO_FAST local", k["plain"], L["fast_local"])
    check("CO_FAST free", kinds(inner.__code__)["arg"] & 0xF0, L["fast_free"])
    if L["fast_hidden"]:
        m = compile("[q for q in range(3)]", "<m>", "exec")
        check("CO_FAST hidden", kinds(m)["q"],
              L["fast_hidden"] | L["fast_local"])

# Methods, builtins, weak references
bound = inst.__init__
check("method_self", obj_at(id(bound) + L["method_self"]), inst)
app = lst.append
check("cfunction_self", ptr(id(app) + L["cfunction_self"]), id(lst))
r = weakref.ref(inst)
check("weakref_object", ptr(id(r) + L["weakref_object"]), id(inst))
def closure_owner():
    captured = inst
    def uses():
        return captured
    return uses
fn = closure_owner()
check("func_closure", ptr(id(fn) + L["func_closure"]), id(fn.__closure__))
import functools
part = functools.partial(len, lst)
check("partial_args", ptr(id(part) + L["partial_args"]), id(part.args))
check("partial_fn", ptr(id(part) + L["partial_fn"]), id(len))

# Thread and interpreter state, frames
api = ctypes.pythonapi
for fn in ("PyThreadState_Get", "PyInterpreterState_Head",
           "PyInterpreterState_ThreadHead", "PyThreadState_Next"):
    getattr(api, fn).restype = P
api.PyInterpreterState_ThreadHead.argtypes = [P]
api.PyThreadState_Next.argtypes = [P]
ts = api.PyThreadState_Get()
interp = api.PyInterpreterState_Head()
check("ts_interp", ptr(ts + L["ts_interp"]), interp)
check("ts_next", ptr(ts + L["ts_next"]),
      api.PyThreadState_Next(ts) or 0)
check("ts_thread_id", rd(ctypes.c_ulong, ts + L["ts_thread_id"]),
      threading.get_ident())
if off("ts_native_thread_id") is not None:
    check("ts_native_thread_id",
          rd(ctypes.c_ulong, ts + L["ts_native_thread_id"]),
          threading.get_native_id())
api.PyThreadState_GetDict.restype = ctypes.py_object
_tsdict = api.PyThreadState_GetDict()      # created on first use
check("ts_dict", ptr(ts + L["ts_dict"]), id(_tsdict))
if off("ts_asyncio_running_loop") is not None:
    import asyncio
    async def _running():
        return ptr(ts + L["ts_asyncio_running_loop"]) == \
            id(asyncio.get_running_loop())
    _loop = asyncio.new_event_loop()
    check("ts_asyncio_running_loop", _loop.run_until_complete(_running()),
          True)
    _loop.close()
check("is_next", ptr(interp + L["is_next"]), 0)
check("is_tstate_head", ptr(interp + L["is_tstate_head"]),
      api.PyInterpreterState_ThreadHead(interp))
check("is_modules", obj_at(interp + L["is_modules"]) is sys.modules, True)
check("is_sysdict", obj_at(interp + L["is_sysdict"]) is sys.__dict__, True)
if off("is_id") is not None:
    check("is_id", rd(ctypes.c_int64, interp + L["is_id"]), 0)
if off("rt_size") is not None:
    rt = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
    check("rt_interpreters_head", ptr(rt + L["rt_interpreters_head"]), interp)
    if off("rt_gilstate_tstate_current") is not None:
        check("rt_gilstate_tstate_current",
              ptr(rt + L["rt_gilstate_tstate_current"]), ts)
if off("is_ceval_gil") is not None:
    gil = ptr(interp + L["is_ceval_gil"])
    check("gil_last_holder", ptr(gil + L["gil_last_holder"]), ts)
    check("gil_locked", rd(ctypes.c_int32, gil + L["gil_locked"]), 1)


def frame_checks():
    # Read the thread's current frame here, not through rd(): that call
    # would have a frame of its own.
    f = sys._getframe()
    if off("ts_frame") is not None:
        check("ts_frame", P.from_address(ts + L["ts_frame"]).value, id(f))
        check("f_back", ptr(id(f) + L["f_back"]), id(f.f_back))
        check("f_code", obj_at(id(f) + L["f_code"]), f.f_code)
        return
    iframe = ptr(id(f) + L["f_frame"])
    if off("ts_cframe") is not None:
        cframe = P.from_address(ts + L["ts_cframe"]).value
        cur = P.from_address(cframe + L["cf_current_frame"]).value
    else:
        cur = P.from_address(ts + L["ts_current_frame"]).value
    check("current frame", cur, iframe)
    check("if_frame_obj", ptr(iframe + L["if_frame_obj"]), id(f))
    code = ptr(iframe + L["if_code"]) & ~L["stackref_tag_mask"]
    check("if_code", code, id(f.f_code))
    back = ptr(iframe + L["if_previous"])
    check("if_previous code",
          ptr(back + L["if_code"]) & ~L["stackref_tag_mask"],
          id(f.f_back.f_code))
frame_checks()

# GC lists: the threshold follows each generation's head; the permanent
# generation is a circular list as long as gc.get_freeze_count() says.
if off("gc_generations") is not None:
    if off("is_gc") is not None:
        gcs = interp + L["is_gc"]
    else:
        gcs = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime")) + \
            L["rt_gc"]
    gen0 = gcs + L["gc_generations"]
else:
    # 3.6: the exported _PyGC_generation0 points at generations[0].head
    gen0 = ptr(ctypes.addressof(ctypes.c_char.in_dll(
        api, "_PyGC_generation0"))) - L["gc_gen_head"]
for i, th in enumerate(gc.get_threshold()):
    g = gen0 + i * L["gc_generation_size"] + L["gc_gen_head"]
    check("gc threshold %d" % i, rd(ctypes.c_int, g + L["gc_head_size"]), th)
    first = ptr(g + L["gc_head_next"])
    check("gc list %d links back" % i,
          ptr(first + L["gc_head_prev"]) & ~3, g)
if off("gc_permanent_generation") is not None:
    perm = gcs + L["gc_permanent_generation"] + L["gc_gen_head"]
    count, node = 0, ptr(perm + L["gc_head_next"])
    while node != perm and count <= 1000000:
        count, node = count + 1, ptr(node + L["gc_head_next"]) & ~3
    check("permanent generation length", count, gc.get_freeze_count())
    if count == 0:
        check("permanent generation prev", ptr(perm + L["gc_head_prev"]) & ~3,
              perm)

# Generators
box = []
def genfunc():
    box.append(gstate(box[0]))
    yield 1
    yield 2
def gstate(g):
    if off("gen_frame_state") is not None:
        return rd(ctypes.c_int8, id(g) + L["gen_frame_state"])
    if off("f_state") is not None:
        return rd(ctypes.c_int8, id(g.gi_frame) + L["f_state"])
    return None
g = genfunc()
box.append(g)
check("gen_name", obj_at(id(g) + L["gen_name"]), "genfunc")
check("gen_qualname", obj_at(id(g) + L["gen_qualname"]), g.__qualname__)
if off("gen_code") is not None:
    check("gen_code", obj_at(id(g) + L["gen_code"]), g.gi_code)
if off("gen_frame") is not None:
    check("gen_frame", ptr(id(g) + L["gen_frame"]), id(g.gi_frame))
if off("gen_running") is not None:
    check("gen_running", rd(ctypes.c_int8, id(g) + L["gen_running"]), 0)
if off("gen_iframe") is not None:
    fr = id(g) + L["gen_iframe"]
    check("gen_iframe code", ptr(fr + L["if_code"]) & ~L["stackref_tag_mask"],
          id(genfunc.__code__))
    check("owner_generator", rd(ctypes.c_int8, fr + L["if_owner"]),
          L["owner_generator"])
if L["gs_created"] != -100:
    check("gs_created", gstate(g), L["gs_created"])
    next(g)
    check("gs_executing", box[1], L["gs_executing"])
    check("gs_suspended", gstate(g), L["gs_suspended"])
    if L["gs_suspended_yield_from"] != -100:
        def delegating():
            yield from g
        dg = delegating()
        next(dg)
        check("gs_suspended_yield_from", gstate(dg),
              L["gs_suspended_yield_from"])
    if off("gen_frame_state") is not None:
        for _ in g:
            pass
        check("gs after return", gstate(g) in (L["gs_completed"],
                                                L["gs_cleared"]), True)

async def agen():
    yield 1
ag = agen()
asend = ag.asend(None)
check("asend_gen", ptr(id(asend) + L["asend_gen"]), id(ag))
async def _wrapped():
    pass
_co = _wrapped()
_cw = _co.__await__()
check("corowrapper_coro", ptr(id(_cw) + L["corowrapper_coro"]), id(_co))
_co.close()
if off("agen_running_async") is not None:
    check("agen_running_async",
          rd(ctypes.c_int8, id(ag) + L["agen_running_async"]), 0)
asend.close()

async def coro():
    return 1
if hasattr(sys, "set_coroutine_origin_tracking_depth"):
    sys.set_coroutine_origin_tracking_depth(1)
    co = coro()
    check("coro_origin", obj_at(id(co) + L["coro_origin"]), co.cr_origin)
    co.close()
    sys.set_coroutine_origin_tracking_depth(0)

# asyncio
import _asyncio
check("fut_size", _asyncio.Future.__basicsize__, L["fut_size"])
check("task_size", _asyncio.Task.__basicsize__, L["task_size"])
loop = asyncio.new_event_loop()
fut = _asyncio.Future(loop=loop)
check("fut_loop", obj_at(id(fut) + L["fut_loop"]), loop)
check("fut_state pending", rd(ctypes.c_int, id(fut) + L["fut_state"]), 0)
def cb1(f): pass
def cb2(f): pass
fut.add_done_callback(cb1)
fut.add_done_callback(cb2)
if off("fut_callback0") is not None:
    check("fut_callback0", obj_at(id(fut) + L["fut_callback0"]), cb1)
    ctx = obj_at(id(fut) + L["fut_context0"])
    check("fut_context0", type(ctx).__name__, "Context")
    check("fut_callbacks", len(obj_at(id(fut) + L["fut_callbacks"])), 1)
else:
    check("fut_callbacks", obj_at(id(fut) + L["fut_callbacks"]), [cb1, cb2])
it = fut.__await__()
check("futureiter_future", ptr(id(it) + L["futureiter_future"]), id(fut))
fut.set_result("the-result")
check("fut_result", obj_at(id(fut) + L["fut_result"]), "the-result")
check("fut_state finished", rd(ctypes.c_int, id(fut) + L["fut_state"]), 2)

blocker = _asyncio.Future(loop=loop)
async def waiter():
    await blocker
cw = waiter()
task = _asyncio.Task(cw, loop=loop)
check("task_coro", obj_at(id(task) + L["task_coro"]), cw)
if off("task_context") is not None:
    check("task_context", type(obj_at(id(task) + L["task_context"])).__name__,
          "Context")
if off("task_name") is not None:
    name = obj_at(id(task) + L["task_name"])
    check("task_name", name == task.get_name() or isinstance(name, int), True)
async def one_step():
    pass
loop.run_until_complete(one_step())
check("task_fut_waiter", obj_at(id(task) + L["task_fut_waiter"]), blocker)
if off("fut_callback0") is not None:
    wakeup = obj_at(id(blocker) + L["fut_callback0"])
else:
    wakeup = obj_at(id(blocker) + L["fut_callbacks"])[0]
if off("taskwakeup_task") is not None:
    check("taskwakeup_task", obj_at(id(wakeup) + L["taskwakeup_task"]), task)
else:
    check("task_wakeup m_self", obj_at(id(wakeup) + L["cfunction_self"]), task)
blocker.set_result(None)
loop.run_until_complete(task)
loop.close()

json.dump(bad, sys.stdout)
'''


def run_python(exe, script, stdin=None):
    p = subprocess.run([exe, "-I", "-c", script], input=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        raise GenError("%s failed:\n%s" % (exe, p.stderr))
    return json.loads(p.stdout)


# --------------------------------------------------------------------------
# Installations

class Install:
    def __init__(self, prefix, exe, version):
        self.prefix, self.exe = prefix, exe
        self.version = version            # "3.X.Y"
        self.minor = int(version.split(".")[1])
        x = "3.%d" % self.minor
        libs = sorted(glob.glob(os.path.join(prefix, "lib",
                                             "libpython%s*.so.1.0" % x)))
        # A static build keeps everything in the executable.
        self.libpython = libs[0] if libs else exe
        mods = sorted(glob.glob(os.path.join(prefix, "lib", "python" + x,
                                             "lib-dynload", "_asyncio*.so")))
        # Built-in _asyncio (no extension module) lives in the interpreter.
        self.asyncio = mods[0] if mods else self.libpython


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
    return {k: v[1] for k, v in best.items()}


def install_from_prefix(prefix):
    exes = sorted(glob.glob(os.path.join(prefix, "bin", "python3.*")))
    exes = [e for e in exes if re.fullmatch(r"python3\.\d+",
                                            os.path.basename(e))]
    if not exes:
        raise GenError("no bin/python3.X under %s" % prefix)
    ver = run_python(exes[0], "import sys, json; "
                     "json.dump(list(sys.version_info[:3]), sys.stdout)")
    return Install(prefix, exes[0], "%d.%d.%d" % tuple(ver))


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
    queries = {"py": [], "aio": []}
    for _, name in fields:
        for src, q in RULES[name].queries():
            if q not in queries[src]:
                queries[src].append(q)
    answers, ids = {}, {}
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        py = pool.submit(run_gdb, inst.libpython, queries["py"],
                         os.path.join(tmpdir, "py"))
        aio = pool.submit(run_gdb, inst.asyncio, queries["aio"],
                          os.path.join(tmpdir, "aio"))
        facts = pool.submit(run_python, inst.exe, FACTS_SCRIPT)
        ids["py"], answers["py"] = py.result()
        ids["aio"], answers["aio"] = aio.result()
        facts = facts.result()
    if facts["version"][:2] != [3, inst.minor]:
        raise GenError("%s reports version %r" % (inst.exe, facts["version"]))
    ctx = Context(inst.minor, answers, facts)
    table = {}
    for _, name in fields:
        table[name] = RULES[name].value(ctx)
    check_bounds(answers)
    validate(inst, table)
    bad = run_python(inst.exe, VERIFY_SCRIPT, json.dumps(table))
    if bad:
        raise GenError("%s: the derived table does not match the running "
                       "interpreter:\n  %s" % (inst.version, "\n  ".join(bad)))
    source = SOURCE_SEP.join([
        "CPython " + inst.version,
        "%s build-id %s" % (os.path.basename(inst.libpython), ids["py"]),
        "%s build-id %s" % (os.path.basename(inst.asyncio), ids["aio"])])
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
    v = inst.version
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
    need(has("gc_head_next") and has("gc_generation_size"), "GC lists")
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
    r"static const struct py_layout layout_3_(?P=n) = \{\n"
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


def format_block(minor, source, table, fields, enums):
    lines = ["/*"]
    lines += [" * " + part for part in source.split(SOURCE_SEP)]
    lines += [" */", "static const struct py_layout layout_3_%d = {" % minor]
    for ctype, name in fields:
        lines.append("\t.%s = %s," % (name, format_value(ctype, name,
                                                         table[name], enums)))
    lines.append("};")
    return "\n".join(lines) + "\n"


def format_file(blocks):
    """blocks: {minor: (source, text)}"""
    minors = sorted(blocks)
    versions = [blocks[m][0].split(SOURCE_SEP)[0].split()[-1]
                for m in minors]
    out = ["/*",
           " * generated by tools/gen-layouts.py from CPython",
           " * %s" % ", ".join(versions),
           " * (libpython and _asyncio build ids above each table); do not"
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
    out += ["const struct py_layout *py_layout_for(int major, int minor)",
            "{",
            "\tstatic const struct py_layout *const all[] = {"]
    out += ["\t\t&layout_3_%d," % m for m in minors]
    out += ["\t};",
            "\tsize_t i;",
            "",
            "\tfor (i = 0; i < sizeof(all) / sizeof(all[0]); i++)",
            "\t\tif (all[i]->major == major && all[i]->minor == minor)",
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
        blocks[int(m.group("n"))] = (source, block, missing)
    return blocks


# --------------------------------------------------------------------------

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
            installs[inst.minor] = inst

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
                    d = os.path.join(tmp, str(minor))
                    os.makedirs(os.path.join(d, "py"))
                    os.makedirs(os.path.join(d, "aio"))
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
                raise GenError("3.%d is not installed here and its committed "
                               "table lacks %s" % (minor, ", ".join(missing)))
            print("gen-layouts: 3.%d is not installed here; keeping the "
                  "committed table (%s)"
                  % (minor, source.split(SOURCE_SEP)[0]), file=sys.stderr)
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
