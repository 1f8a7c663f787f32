"""Holds coroscope cannot be sure of, and says so.

- "bare": a thread takes an RLock with a bare acquire() in a function
  that returns, then waits on an event: the RLock names the thread's
  ident, and nothing on its stack took it.
- "exited": a thread takes another RLock so and exits; the threads
  started after it may reuse its ident (glibc reuses the stack of a
  joined thread): the ready file says which one did, if any.
- "twice": a thread enters `with lock:` and releases the lock by hand
  inside its block, then waits; another enters the same lock and waits
  holding it; a third waits for it.  Two `with` blocks, one holder.
- "with": a thread holds a third RLock in a `with`: a sure hold.
Each blocked thread waits for the lock at its "# MARK:" line.

Usage: unsure_holders.py READY_FILE.  Must run unchanged on CPython 3.6
through 3.14.
"""

import os
import sys
import threading
import time

from _ready import write_ready

stop = threading.Event()
bare_lock = threading.RLock()
exited_lock = threading.RLock()
with_lock = threading.RLock()
plain = threading.Lock()
idents = {}


def take_bare(lock):
    lock.acquire()


def bare():
    take_bare(bare_lock)
    idents["bare"] = threading.get_ident()
    stop.wait()


def exits():
    take_bare(exited_lock)
    idents["exited"] = threading.get_ident()


def idle():
    stop.wait()


def with_holder():
    with with_lock:
        stop.wait()


def released():
    with plain:
        plain.release()
        try:
            stop.wait()
        finally:
            plain.acquire()


def entered():
    with plain:
        stop.wait()


def wait_for(lock):
    with lock:  # MARK: unsure-wait
        pass


def start(target, name, *args):
    t = threading.Thread(target=target, name=name, args=args, daemon=True)
    t.start()
    return t


def wait_alone():
    """Until the joined thread has left the kernel too: join() returns
    when its Python state ends, and glibc reuses its stack (and ident)
    only once it is gone.  Bounded: 10 s."""
    for _ in range(1000):
        try:
            if len(os.listdir("/proc/self/task")) == 1:
                return
        except OSError:
            return
        time.sleep(0.01)


if __name__ == "__main__":
    start(exits, "exits").join()
    wait_alone()
    for i in range(3):
        start(idle, "idle-%d" % i)
    start(bare, "bare")
    start(with_holder, "with-holder")
    start(released, "released")
    time.sleep(0.2)
    start(entered, "entered")
    time.sleep(0.2)
    for lock, name in ((bare_lock, "bare"), (exited_lock, "exited"),
                       (with_lock, "with"), (plain, "twice")):
        start(wait_for, "waits-" + name, lock)
    time.sleep(0.3)
    # (any thread may have its ident; the idle ones most likely)
    write_ready(sys.argv[1], {
        "reused_by": [t.name for t in threading.enumerate()
                      if t.ident == idents["exited"]]})
    stop.wait()
