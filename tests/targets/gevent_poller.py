"""gevent: greenlet "poller" retries Event.wait(timeout=0.3) on an Event
nobody sets, for ever: it wakes at every timeout, at the same line.

Usage: gevent_poller.py READY_FILE

It counts its tries in a local, which the samples see change (its
frames stay at one line).  READY_FILE gets, as JSON: "pid", once the
poller has polled twice.  Needs gevent (Debian's python3-gevent).
"""

import os
import sys

import gevent
import gevent.event

from _ready import write_ready

flag = gevent.event.Event()


def poller():
    n = 0
    while not flag.wait(timeout=0.3):  # MARK: poll
        n += 1
        if n == 2:
            write_ready(sys.argv[1], {"pid": os.getpid()})


g = gevent.spawn(poller)
g.name = "poller"
g.join()
