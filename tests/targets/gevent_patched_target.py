"""A target for coroscope's thread-name test under gevent's monkey-patching.

Usage: gevent_patched_target.py READY_FILE

gevent.monkey.patch_all() turns threading's idents into greenlet ids:
threading._active is keyed by id(greenlet), so the process's real main
thread is listed under its main greenlet, and a patched threading.Thread
is a greenlet.  The main thread is renamed, a real OS thread (started
with the unpatched _thread, named through threading.current_thread()) and
a patched Thread park, and the process records the names and idents it
sees to READY_FILE as JSON (atomically); then the main greenlet joins.

Needs gevent (Debian's python3-gevent on /usr/bin/python3.11).
"""

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import greenlet  # noqa: E402

MAIN_NAME = "patched-main"
REAL_NAME = "real-os-thread"
GREEN_NAME = "patched-worker"


def green_worker():
    time.sleep(3600)  # MARK: patched-sleep


def real_thread(box):
    """A real thread: its threading object is a _DummyThread keyed by
    id() of its own main greenlet."""
    threading.current_thread().name = REAL_NAME
    box["tid"] = threading.get_native_id()
    box["ident"] = threading.get_ident()
    real_sleep(3600)  # MARK: real-sleep


def main(ready):
    threading.current_thread().name = MAIN_NAME
    box = {}
    # started through the original _thread: a real OS thread (a patched
    # Event cannot be set from it, so poll)
    start_new_thread = monkey.get_original("_thread", "start_new_thread")
    start_new_thread(real_thread, (box,))
    for _ in range(1000):
        if "ident" in box:
            break
        real_sleep(0.01)
    worker = threading.Thread(target=green_worker, name=GREEN_NAME,
                              daemon=True)
    worker.start()
    time.sleep(0.1)   # the worker greenlet parks
    record = {
        "pid": os.getpid(),
        "main_ident": threading.get_ident(),
        "main_greenlet": id(greenlet.getcurrent()),
        "worker_ident": worker.ident,
        "real_tid": box["tid"],
        "real_ident": box["ident"],
    }
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)
    worker.join()  # MARK: patched-join


real_sleep = monkey.get_original("time", "sleep")

if __name__ == "__main__":
    main(sys.argv[1])  # MARK: main-call
