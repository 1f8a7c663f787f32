"""A thread waits in queue.SimpleQueue.get(), a wait in C (on a lock of
the queue's own up to 3.12, a parking lot from 3.13), for an item that
never comes.

Usage: queue_waiter.py READY_FILE      (CPython 3.7+: SimpleQueue)
Writes READY_FILE (JSON: pid, the waiter's kernel tid) once it waits.
"""

import os
import queue
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

_tid = {}


def getter(q, started):
    _tid["getter"] = native_tid()
    started.set()
    q.get()  # MARK: simple-get


started = threading.Event()
threading.Thread(target=getter, args=(queue.SimpleQueue(), started),
                 name="getter", daemon=True).start()
started.wait()
time.sleep(0.2)
write_ready(sys.argv[1], {"pid": os.getpid(), "tid": _tid["getter"]})
time.sleep(3600)
