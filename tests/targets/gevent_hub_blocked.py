"""gevent without monkey-patching: greenlet "blocker" takes a gevent
Semaphore, yields once, then calls the unpatched time.sleep() inside its
`with` block, which blocks the thread and so the hub: the two waiters on
the Semaphore, and the main greenlet joining them all, can never run.

Usage: gevent_hub_blocked.py READY_FILE

READY_FILE gets, as JSON: "pid" and "blocker" (the greenlet's id()),
written by the blocker just before it blocks.  Needs gevent (Debian's
python3-gevent).
"""

import os
import sys
import time

import gevent
import gevent.lock

from _ready import write_ready

sem = gevent.lock.Semaphore(1)


def blocker():
    with sem:
        gevent.sleep(0.05)
        write_ready(sys.argv[1], {"pid": os.getpid(),
                                  "blocker": hex(id(gevent.getcurrent()))})
        time.sleep(3600)  # MARK: hub-blocked


def waiter():
    sem.acquire()  # MARK: sem-waiter


b = gevent.spawn(blocker)
b.name = "blocker"
ws = [gevent.spawn(waiter) for _ in range(2)]
gevent.joinall(ws + [b])
