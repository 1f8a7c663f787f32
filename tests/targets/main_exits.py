"""A process whose main thread has exited, calling pthread_exit() while a
worker runs on: the kernel keeps the main thread as a zombie, with no
memory, maps or files of its own, until the process ends; the
interpreter still lists its thread state.

Usage: main_exits.py READY_FILE

Writes {"pid", "worker_tid"} to READY_FILE, then the main thread exits.
Must run unchanged on CPython 3.6 through 3.14.
"""

import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ready import write_ready  # noqa: E402
from _tids import native_tid  # noqa: E402

started = threading.Event()
tids = {}


def worker():
    tids["worker"] = native_tid()
    started.set()
    threading.Event().wait()  # MARK: worker-waits


if __name__ == "__main__":
    threading.Thread(target=worker, name="survivor").start()
    started.wait()
    write_ready(sys.argv[1], {"pid": os.getpid(),
                              "worker_tid": tids["worker"]})
    # ctypes drops the GIL around the call: the worker runs on.
    ctypes.CDLL(None).pthread_exit(None)  # MARK: main-exits
