"""A process whose main thread has exited, calling pthread_exit() while a
worker runs on: the kernel keeps the main thread as a zombie, with no
memory, maps or files of its own, until the process ends; the
interpreter still lists its thread state.

Usage: main_exits.py READY_FILE [write]

Writes {"pid", "worker_tid"} to READY_FILE, then the main thread exits.
With "write" the worker does not wait on an Event: it writes 1,000,000
bytes to a pipe nobody reads, through an unbuffered text stream (python
-u's), and stays in write(2) (READY_FILE also gets the pipe's fds).
Must run unchanged on CPython 3.6 through 3.14.
"""

import ctypes
import io
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ready import write_ready  # noqa: E402
from _tids import native_tid  # noqa: E402

started = threading.Event()
tids = {}


def worker(pipe):
    tids["worker"] = native_tid()
    started.set()
    if pipe is None:
        threading.Event().wait()  # MARK: worker-waits
    out = io.TextIOWrapper(io.FileIO(pipe[1], "w", closefd=False),
                           encoding="ascii", write_through=True)
    out.write("x" * 1000000)  # MARK: worker-writes
    out.write("END\n")
    threading.Event().wait()


if __name__ == "__main__":
    pipe = os.pipe() if sys.argv[2:] == ["write"] else None
    threading.Thread(target=worker, args=(pipe,), name="survivor").start()
    started.wait()
    write_ready(sys.argv[1], {"pid": os.getpid(),
                              "worker_tid": tids["worker"],
                              "pipe": pipe})
    # ctypes drops the GIL around the call: the worker runs on.
    ctypes.CDLL(None).pthread_exit(None)  # MARK: main-exits
