"""A target for coroscope's functional tests: threads parked in known places.

Usage: threads_target.py READY_FILE [--spin | --contend]

Every thread parks in a distinct chain of nested functions, each parking
line is tagged with a "# MARK: name" comment so tests find line numbers by
scanning this file instead of hard-coding them.  Once every thread is
parked the main thread snapshots sys._current_frames() -- the ground truth
coroscope must reproduce from outside -- and writes it to READY_FILE as JSON
(atomically: a temporary file then rename), then parks itself.

With --spin one more thread spins in pure Python, so it holds the GIL
(its stack moves, so tests only use it for the holds_gil check).  With
--contend two threads spin ("spinner" and "spinner-2"): whichever does
not hold the GIL is waiting for it (or about to).

Must run unchanged on CPython 3.6 through 3.14: no walrus, no match, no
f-string "=" specifier, no positional-only parameters.
"""

import json
import os
import platform
import sys
import threading
import time

from _tids import native_tid

# Values a parked frame holds, for --locals.  Exact types matter: tests
# decide which repr rule applies from type(value).__name__.
BIG_INT = 2 ** 100
LONG_STR_LEN = 300

_local_lock = threading.Lock()
_tids = {}              # get_ident() -> native TID, filled by each thread


def register_thread():
    with _local_lock:
        _tids[threading.get_ident()] = native_tid()


class Marker(object):
    """A custom class, so a local has a type coroscope knows nothing about."""

    def __init__(self, label):
        self.label = label


class Sleeper(object):
    def __init__(self, parked):
        self.parked = parked

    def run_forever(self):
        register_thread()
        self.nap(3600)

    def nap(self, seconds):
        self.parked.set()
        time.sleep(seconds)  # MARK: sleep-method


def wait_for_lock(lock, parked):
    register_thread()
    parked.set()
    lock.acquire()  # MARK: lock-acquire


def wait_for_event(parked):
    register_thread()
    never = threading.Event()
    parked.set()
    never.wait()  # MARK: event-wait


def deep_level1(parked, cond):
    register_thread()
    cell_var = "shared-cell"

    def deep_level2(depth):
        seen = cell_var
        return deep_level3(parked, cond, depth + 1, seen)

    return deep_level2(1)  # MARK: deep-call-2


def deep_level3(parked, cond, depth, label):
    none_v = None
    true_v = True
    false_v = False
    zero = 0
    small_int = 7
    neg_int = -42
    big_int = BIG_INT
    big_neg_int = -12345678901234567890
    float_tenth = 0.1
    float_big = 1e16
    float_neg = -2.5
    float_inf = float("inf")
    text = 'it\'s "quoted"\nand caf\xe9'
    long_text = "x" * LONG_STR_LEN
    data = b"\x00ab"
    empty_list = []
    one_tuple = (5,)
    small_tuple = (1, "two", 3.0)
    small_list = [1, 2, 3]
    small_dict = {"a": 1, "b": None}
    small_set = {1, 2, 3}
    frozen = frozenset(["x"])
    empty_set = set()
    hundred = list(range(100))
    marker = Marker("deep")
    with cond:
        parked.set()
        cond.wait()  # MARK: cond-wait
    return (none_v, true_v, false_v, zero, small_int, neg_int, big_int,
            big_neg_int, float_tenth, float_big, float_neg, float_inf, text,
            long_text, data, empty_list, one_tuple, small_tuple, small_list,
            small_dict, small_set, frozen, empty_set, hundred, marker, depth,
            label)


def spin(parked):
    register_thread()
    n = 0
    parked.set()
    while True: n += 1  # MARK: spin


def describe_value(value):
    """What a test needs to predict coroscope's repr of a local."""
    info = {"type": type(value).__name__, "repr": repr(value), "id": id(value)}
    if type(value) in (str, bytes):
        info["len"] = len(value)
        info["head_repr"] = repr(value[:200])
    elif type(value) in (tuple, list, set, frozenset):
        info["len"] = len(value)
        info["items"] = [[type(v).__name__, repr(v)] for v in value]
    elif type(value) is dict:
        info["len"] = len(value)
        info["items"] = [[type(k).__name__, repr(k), type(v).__name__,
                          repr(v)] for k, v in value.items()]
    return info


def snapshot(skip_idents):
    """sys._current_frames() as JSON-able data, innermost frame first.

    The threads in skip_idents are left out: this one, and the spinner,
    whose frames change as they are read (and reading a running thread's
    frame crashes a free-threaded 3.14 now and then, in frame_lineno_get:
    a CPython bug, seen with gdb here).
    """
    result = {}
    for ident, frame in sys._current_frames().items():
        if ident in skip_idents:
            continue
        frames = []
        while frame is not None:
            code = frame.f_code
            local_items = list(frame.f_locals.items())
            frames.append({
                "file": code.co_filename,
                "line": frame.f_lineno,
                "function": code.co_name,
                "qualname": getattr(code, "co_qualname", code.co_name),
                "locals": dict((k, describe_value(v)) for k, v in local_items),
            })
            frame = frame.f_back
        result[str(ident)] = {"frames": frames}
    for thread in threading.enumerate():
        entry = result.get(str(thread.ident))
        if entry is not None:
            entry["name"] = thread.name
            entry["tid"] = _tids.get(thread.ident)
    return result


def write_ready(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


def main():
    ready_path = sys.argv[1]
    want_spin = "--spin" in sys.argv[2:] or "--contend" in sys.argv[2:]
    want_second = "--contend" in sys.argv[2:]
    register_thread()
    held = threading.Lock()
    held.acquire()                      # never released: locker blocks
    cond = threading.Condition()

    starts = [
        ("sleeper", lambda p: Sleeper(p).run_forever()),
        ("locker", lambda p: wait_for_lock(held, p)),
        ("event-waiter", lambda p: wait_for_event(p)),
        ("deep", lambda p: deep_level1(p, cond)),
    ]
    if want_spin:
        starts.append(("spinner", lambda p: spin(p)))
    if want_second:
        starts.append(("spinner-2", lambda p: spin(p)))
    parked = []
    for name, body in starts:
        ev = threading.Event()
        t = threading.Thread(target=body, args=(ev,), name=name)
        t.daemon = True
        t.start()
        parked.append(ev)
    for ev in parked:
        if not ev.wait(30):
            sys.exit("a thread did not park")
    # Each thread sets its event just before blocking: give it time to
    # actually enter the blocking call.
    time.sleep(0.2)

    main_ident = threading.get_ident()
    running = [t for t in threading.enumerate()
               if t.ident == main_ident or t.name.startswith("spinner")]
    threads = snapshot(set(t.ident for t in running))
    for t in running:
        threads[str(t.ident)] = {"name": t.name, "tid": _tids.get(t.ident),
                                 "frames": None}
    write_ready(ready_path, {
        "pid": os.getpid(),
        "version": platform.python_version(),
        "executable": sys.executable,
        "main_ident": main_ident,
        "main_file": main.__code__.co_filename,
        "threads": threads,
    })
    while True: time.sleep(3600)  # MARK: main-park


main()  # MARK: main-call
