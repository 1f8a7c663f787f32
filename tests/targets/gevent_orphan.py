"""A greenlet whose thread ended: a worker thread runs a gevent hub of
its own, spawns greenlet "orphan" waiting on an Event, lets it park,
and returns; nothing can run the greenlet again.  The main thread,
which never ran gevent, then sleeps.

Usage: gevent_orphan.py READY_FILE

READY_FILE gets, as JSON: "pid", "main" (the main thread's kernel id),
"side" (the ended thread's), "orphan" (the greenlet's id()), once the
side thread has ended.  Needs gevent (Debian's python3-gevent).
"""

import os
import sys
import threading
import time

import gevent
import gevent.event

from _ready import write_ready
from _tids import native_tid

found = {}


def side():
    found["side"] = native_tid()
    event = gevent.event.Event()

    def wait():
        event.wait()  # MARK: orphan-wait

    g = gevent.spawn(wait)
    g.name = "orphan"
    found["orphan"] = hex(id(g))
    gevent.sleep(0.1)


t = threading.Thread(target=side, name="side-hub")
t.start()
t.join()
found["main"] = native_tid()
write_ready(sys.argv[1], dict(found, pid=os.getpid()))
time.sleep(3600)  # MARK: orphan-main-sleeps
