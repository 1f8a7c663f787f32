"""A target for coroscope's native-frame tests: threads blocked in C code
built at test time.

Usage: native_ext_target.py READY_FILE CXX_LIB DEBUG_FRAME_LIB [SPLIT_LIB]

CXX_LIB is tests/targets/native_cxx.cpp built with g++, DEBUG_FRAME_LIB
tests/targets/native_debug_frame.c built with call-frame information in
.debug_frame only, SPLIT_LIB the same with its .debug_frame moved to a
separate debug file.  One thread blocks in each (all end in read() on a
pipe nobody writes to); once all are parked the main thread records
each thread's kernel TID and Python frames (innermost first) in
READY_FILE and sleeps.

Must run unchanged on CPython 3.6 through 3.14.
"""

import ctypes
import json
import os
import sys
import threading
import time

from _tids import native_tid

_tids = {}


def cxx_caller(lib, fd, parked):
    _tids["cxx"] = (threading.get_ident(), native_tid())
    parked.set()
    lib.cs_cxx_block(fd)  # MARK: cxx


def df_caller(lib, fd, parked):
    _tids["debug_frame"] = (threading.get_ident(), native_tid())
    parked.set()
    lib.cs_df_block(fd)  # MARK: debug_frame


def split_caller(lib, fd, parked):
    _tids["split"] = (threading.get_ident(), native_tid())
    parked.set()
    lib.cs_df_block(fd)  # MARK: split


def main():
    ready_path, cxx_path, df_path = sys.argv[1:4]
    callers = [(cxx_caller, ctypes.CDLL(cxx_path)),
               (df_caller, ctypes.CDLL(df_path))]
    if len(sys.argv) > 4:
        callers.append((split_caller, ctypes.CDLL(sys.argv[4])))
    events = []
    for caller, lib in callers:
        rfd, _wfd = os.pipe()
        ev = threading.Event()
        events.append(ev)
        threading.Thread(target=caller, args=(lib, rfd, ev),
                         daemon=True).start()
    for ev in events:
        ev.wait()
    time.sleep(0.3)  # into read()
    current = sys._current_frames()
    threads = {}
    for role, (ident, tid) in _tids.items():
        frames, frame = [], current[ident]
        while frame is not None:
            frames.append({"function": frame.f_code.co_name,
                           "line": frame.f_lineno})
            frame = frame.f_back
        threads[role] = {"tid": tid, "frames": frames}
    tmp = ready_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "threads": threads}, f)
    os.rename(tmp, ready_path)
    while True:
        time.sleep(3600)  # MARK: main


if __name__ == "__main__":
    main()
