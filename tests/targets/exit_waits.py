"""The main code ends while a thread that is not a daemon waits on a
queue nothing feeds: the interpreter's exit (threading._shutdown())
joins it for good.

Usage: exit_waits.py READY_FILE [pool]

With "pool", the waiting thread is a ThreadPoolExecutor's worker running
a job (a daemon thread before 3.9, which concurrent.futures' atexit hook
joins then).  READY_FILE gets, as JSON, "pid" and "tids" ("worker").
"""

import os
import queue
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

jobs = queue.Queue()
tids = {}


def worker():
    tids["worker"] = native_tid()
    jobs.get()  # MARK: exit-worker


if len(sys.argv) > 2 and sys.argv[2] == "pool":
    import concurrent.futures
    pool = concurrent.futures.ThreadPoolExecutor(1)
    pool.submit(worker)
else:
    threading.Thread(target=worker, name="worker").start()
while "worker" not in tids:
    time.sleep(0.01)
write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids})
