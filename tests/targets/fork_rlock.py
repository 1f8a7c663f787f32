"""An RLock held by a thread that is not in the process: the lock's
owner ident names a thread that ended holding it ("ended"), or one of
the parent's when the process forked ("fork"), which fork did not copy;
or a plain Lock, which names no owner, held at the fork ("fork-lock").

Usage: fork_rlock.py READY_FILE MODE

- fork: thread "holder" holds the RLock (asleep in its `with`); the
  main thread forks; the child takes the lock and blocks for good; the
  parent waits for the child.
- fork-lock: as fork, with a threading.Lock.
- ended: thread "holder" takes the RLock and ends; the main thread then
  blocks taking it.

READY_FILE gets, as JSON, "pid" (the process blocked on the lock: the
child with "fork"), "parent" and "ident": the holder's
threading.get_ident(), which the lock names as its owner (the
interpreter's own repr of the lock says so too: "owner=").
"""

import os
import sys
import threading
import time
import warnings

from _ready import write_ready

ready, mode = sys.argv[1], sys.argv[2]
lock = threading.Lock() if mode == "fork-lock" else threading.RLock()
idents = []


def holder():
    with lock:  # MARK: fork-takes
        idents.append(threading.get_ident())
        time.sleep(3600)  # MARK: fork-holds


def taker():
    lock.acquire()
    idents.append(threading.get_ident())


if mode in ("fork", "fork-lock"):
    threading.Thread(target=holder, name="holder", daemon=True).start()
    while not idents:
        time.sleep(0.01)
    # (3.12 warns of fork() in a process with threads: this is that)
    warnings.simplefilter("ignore")
    child = os.fork()
    if child == 0:
        with lock:  # MARK: fork-child
            pass
        os._exit(0)
    time.sleep(0.3)
    write_ready(ready, {"pid": child, "parent": os.getpid(),
                        "ident": idents[0]})
    os.waitpid(child, 0)  # MARK: fork-parent
else:
    t = threading.Thread(target=taker, name="holder")
    t.start()
    t.join()
    write_ready(ready, {"pid": os.getpid(), "parent": os.getppid(),
                        "ident": idents[0]})
    with lock:  # MARK: ended-take
        pass
