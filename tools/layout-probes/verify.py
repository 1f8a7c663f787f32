# Run by tools/gen-layouts.py under each CPython being tabled (python -I):
# reads the interpreter's own objects through ctypes at the offsets of the
# candidate table L (JSON on stdin) and prints a JSON list of mismatches.
# Must stay valid Python 3.6.

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
# Free-threaded builds split the count (ob_ref_local, ob_ref_shared).
if off("ob_refcnt") is not None:
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
check("module_dict", ptr(id(sys) + L["module_dict"]), id(sys.__dict__))
if L["managed_dict_back"]:
    with_dict = Plain()
    d = with_dict.__dict__      # materialised: the slot holds it
    check("managed_dict_back", ptr(id(with_dict) - L["managed_dict_back"]),
          id(d))
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

# collections.deque: items over three blocks, the first not at slot 0
import collections
dq = collections.deque(range(1000, 1200))
for _ in range(5):
    dq.popleft()
blk = ptr(id(dq) + L["deque_leftblock"])
at = rd(ctypes.c_ssize_t, id(dq) + L["deque_leftindex"])
blocklen = (L["block_rightlink"] - L["block_data"]) // ctypes.sizeof(P)
items = []
while blk and len(items) < len(dq):
    items.append(obj_at(blk + L["block_data"] + at * ctypes.sizeof(P)))
    at += 1
    if at == blocklen:
        blk, at = ptr(blk + L["block_rightlink"]), 0
check("deque items", items, list(dq))

# A socket's fd, which only its C struct keeps
import socket
sk = socket.socket()
check("sock_fd", rd(ctypes.c_int, id(sk) + L["sock_fd"]), sk.fileno())
sk.close()

# A multiprocessing lock's C SemLock: the semaphore's address (its value,
# glibc's first 32-bit word, 0 while held), this process's count, the
# ident of the thread that took it
import multiprocessing
import threading
for make, kind, maxvalue in ((multiprocessing.Lock, 1, 1),
                             (multiprocessing.RLock, 0, 1),
                             (lambda: multiprocessing.BoundedSemaphore(3),
                              1, 3)):
    lk = make()
    sl = lk._semlock
    lk.acquire()
    if kind == 0:
        lk.acquire()
    check("semlock_count", rd(ctypes.c_int, id(sl) + L["semlock_count"]),
          2 if kind == 0 else 1)
    check("semlock_last_tid",
          rd(ctypes.c_ulong, id(sl) + L["semlock_last_tid"]),
          threading.get_ident())
    check("semlock_handle", rd(ctypes.c_void_p, id(sl) + L["semlock_handle"]),
          sl.handle)
    check("semlock_kind", rd(ctypes.c_int, id(sl) + L["semlock_kind"]), kind)
    check("semlock_maxvalue",
          rd(ctypes.c_int, id(sl) + L["semlock_maxvalue"]), maxvalue)
    check("sem_t value while held",
          rd(ctypes.c_uint, sl.handle), 2 if maxvalue == 3 else 0)

# queue.SimpleQueue (3.7+): its items, some taken, a ring wrapped past
# its end where it is one (3.13+)
try:
    import _queue
except ImportError:
    _queue = None
if _queue is not None:
    sq = _queue.SimpleQueue()
    for i in range(6):
        sq.put("sq-%d" % i)
    for _ in range(5):
        sq.get()
    for i in range(6, 12):
        sq.put("sq-%d" % i)
    want = ["sq-%d" % i for i in range(5, 12)]
    if off("sq_lst") is not None:
        lst = obj_at(id(sq) + L["sq_lst"])
        pos = rd(ctypes.c_ssize_t, id(sq) + L["sq_lst_pos"])
        check("SimpleQueue lst[lst_pos:]", lst[pos:], want)
    else:
        arr = ptr(id(sq) + L["sq_items"])
        at = rd(ctypes.c_ssize_t, id(sq) + L["sq_get_idx"])
        cap = rd(ctypes.c_ssize_t, id(sq) + L["sq_items_cap"])
        n = rd(ctypes.c_ssize_t, id(sq) + L["sq_num_items"])
        check("SimpleQueue ring wraps", at + n > cap, True)
        check("SimpleQueue ring items",
              [obj_at(arr + ((at + k) % cap) * ctypes.sizeof(P))
               for k in range(n)], want)

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
# an unbound C method (what LOAD_METHOD pushes): its PyMethodDef's name
check("descr_method",
      ctypes.string_at(ptr(ptr(id(list.append) + L["descr_method"]))),
      b"append")
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
    # A free-threaded build runs with its GIL disabled: never locked.
    check("gil_locked", rd(ctypes.c_int32, gil + L["gil_locked"]),
          0 if L["free_threaded"] else 1)


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
# Free-threaded builds have no lists: check the object's tracked bit and
# that this thread's GC heap belongs to it.
def gc_list_checks():
    global gcs
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
if L["gc_kind"] == 0:
    gc_list_checks()
else:
    check("ob_gc_bits tracked", rd(ctypes.c_uint8, id(lst) +
                                   L["ob_gc_bits"]) & 1, 1)
    check("ob_gc_bits untracked", rd(ctypes.c_uint8, id(1.5) +
                                     L["ob_gc_bits"]) & 1, 0)
    # The page that holds lst belongs to this thread's GC heap: checks
    # the heap array, the segment geometry and the page's heap pointer.
    heap = ts + L["ts_mi_heaps"] + L["mi_heap_gc"] * L["mi_heap_size"]
    seg = id(lst) & ~((1 << L["mi_segment_shift"]) - 1)
    page = seg + L["mi_seg_slices"] + L["mi_page_size"] * (
        (id(lst) - seg) >> L["mi_slice_shift"])
    check("mimalloc page heap", ptr(page + L["mi_page_heap"]), heap)
    check("mimalloc block size",
          0 < rd(ctypes.c_uint32, page + L["mi_page_block_size"]) <= 64, True)

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
