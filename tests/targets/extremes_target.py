"""A target holding values and stacks at the edges of what coroscope bounds.

Usage: extremes_target.py READY_FILE [DEPTH]

One thread holds str locals longer than 2**20 characters (1-, 2- and
4-byte kinds) and parks; another recurses DEPTH (default 50000) calls deep
and parks at the bottom, on a stack big enough for the old interpreters'
C recursion.  Once both are parked the main thread writes to READY_FILE
(atomically): the threads' native ids, the long strings' lengths and
reprs of their heads, and how many Python frames the deep thread has, as
traceback.extract_stack() counts them; then it parks.

Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import platform
import sys
import threading
import time
import traceback

HUGE = 2 ** 20 + 7
INFO = {}
_lock = threading.Lock()


def note(key, value):
    with _lock:
        INFO[key] = value


def hold_huge(parked):
    huge_ascii = "a" * HUGE
    huge_ucs2 = "\u0101" * HUGE
    huge_ucs4 = "\U0001f600" * HUGE
    note("huge", dict((name, {"len": len(v), "head_repr": repr(v[:200])})
                      for name, v in (("huge_ascii", huge_ascii),
                                      ("huge_ucs2", huge_ucs2),
                                      ("huge_ucs4", huge_ucs4))))
    note("huge_tid", threading.get_native_id()
         if hasattr(threading, "get_native_id") else None)
    parked.set()
    time.sleep(1e6)  # MARK: huge-park
    return huge_ascii, huge_ucs2, huge_ucs4


def recurse(n, parked):
    if n == 0:
        note("deep_frames", len(traceback.extract_stack()))
        parked.set()
        time.sleep(1e6)  # MARK: deep-park
        return 0
    return recurse(n - 1, parked) + 1  # MARK: deep-call


def deep_main(depth, parked):
    note("deep_tid", threading.get_native_id()
         if hasattr(threading, "get_native_id") else None)
    recurse(depth, parked)  # MARK: deep-main


def main():
    ready = sys.argv[1]
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    sys.setrecursionlimit(depth + 1000)
    # Before 3.11 every Python call also nests C frames.
    threading.stack_size(512 << 20)
    huge_parked, deep_parked = threading.Event(), threading.Event()
    threads = [
        threading.Thread(target=hold_huge, args=(huge_parked,), name="huge",
                         daemon=True),
        threading.Thread(target=deep_main, args=(depth, deep_parked),
                         name="deep", daemon=True),
    ]
    for t in threads:
        t.start()
    huge_parked.wait()
    deep_parked.wait()
    info = dict(INFO)
    info.update({"pid": os.getpid(), "depth": depth,
                 "python": platform.python_version()})
    tmp = ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.rename(tmp, ready)
    time.sleep(1e6)  # MARK: main-park


if __name__ == "__main__":
    main()
