"""Benchmark target: COUNT gevent greenlets parked on one event.

Usage: greenlets.py READY_FILE COUNT

Every greenlet waits on a gevent Event that is never set; the main
greenlet sleeps in the hub, so the process sits in epoll_wait with COUNT
suspended greenlets: a gevent server between two requests.  On CPython
3.11 and later each greenlet keeps its Python frames in a data stack
chunk of its own (16 KiB, mostly never written).  Needs gevent
(Debian's python3-gevent, for /usr/bin/python3).
"""

import sys

import gevent
import gevent.event

from _ready import announce


def worker(event):
    event.wait()


def main(ready, count):
    event = gevent.event.Event()
    workers = [gevent.spawn(worker, event) for _ in range(count)]
    # One turn of the hub runs every greenlet up to its wait.
    gevent.sleep(0)
    gevent.sleep(0.1)
    announce(ready, greenlets=len(workers))
    # Something must stay scheduled, or the hub ends the wait with
    # LoopExit.
    gevent.sleep(10 ** 6)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
