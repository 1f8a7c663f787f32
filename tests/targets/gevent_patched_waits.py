"""A target for the wait-for graph under gevent's monkey-patching: the
program's threads are greenlets, threading.Lock is gevent's LockType,
threading.Event gevent's Event, and threading's RLock and queue.Queue
(Python classes) wait in gevent's locks.

Usage: gevent_patched_waits.py READY_FILE

Threads, by name:
  holder     holds a Lock and an RLock (`with`), then waits on an Event
             nothing sets, from a function of its own
  waiter     waits for the Lock (`with`)
  rwaiter    waits for the RLock (`with`)
  getter     waits in get() on an empty queue.Queue
  parent     holds a Lock (`with`) and joins "child", which waits for
             that Lock: a deadlock through a patched Thread.join()
Once all are parked it writes READY_FILE (JSON: pid, each thread's
greenlet and the objects by address) atomically.  Lines tests look for
carry "# MARK: name".

Needs gevent (Debian's python3-gevent on /usr/bin/python3.11).
"""

from gevent import monkey
monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402

GREENLETS = {}


def mine(name):
    GREENLETS[name] = id(gevent.getcurrent())


def park(ev):
    ev.wait()  # MARK: patched-park


def holder(lock, rlock, ev):
    mine("holder")
    with lock:
        with rlock:
            park(ev)  # MARK: patched-holder


def waiter(lock):
    mine("waiter")
    with lock:  # MARK: patched-lock
        pass


def rwaiter(rlock):
    mine("rwaiter")
    with rlock:  # MARK: patched-rlock
        pass


def getter(q):
    mine("getter")
    q.get()  # MARK: patched-get


def child(plock):
    mine("child")
    with plock:  # MARK: patched-child
        pass


def parent(plock, started):
    mine("parent")
    with plock:
        t = threading.Thread(target=child, args=(plock,), name="child",
                             daemon=True)
        started.append(t)
        t.start()
        t.join()  # MARK: patched-join


def main(ready):
    lock, rlock = threading.Lock(), threading.RLock()
    ev, q = threading.Event(), queue.Queue()
    plock, started = threading.Lock(), []
    for target, args in ((holder, (lock, rlock, ev)), (waiter, (lock,)),
                         (rwaiter, (rlock,)), (getter, (q,)),
                         (parent, (plock, started))):
        threading.Thread(target=target, args=args, name=target.__name__,
                         daemon=True).start()
        time.sleep(0.05)  # the holder holds both before the others ask
    time.sleep(0.2)
    record = {"pid": os.getpid(), "greenlets": GREENLETS,
              "objects": {"lock": id(lock), "rlock": id(rlock),
                          "ev": id(ev), "q": id(q), "plock": id(plock),
                          "childthread": id(started[0])}}
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)
    time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1])
