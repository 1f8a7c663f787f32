"""A target for the text report's grouping of alike threads.

Usage: alike_threads.py READY_FILE POOL

POOL threads ("pool-N", each name carrying a newline and an escape
sequence, as hostile names do) park on one line of pool_worker; two
threads ("pair-N") park on one line of pair_worker; the main thread parks
in main.  Parking lines carry "# MARK: name" comments.  READY_FILE gets
the pid and each thread's kernel TID and name (JSON, written atomically).

Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import threading

from _tids import native_tid

_lock = threading.Lock()
_tids = {}              # name -> native TID


def register(parked):
    with _lock:
        _tids[threading.current_thread().name] = native_tid()
    parked.release()


def pool_worker(parked, never):
    register(parked)
    never.wait()  # MARK: pool-wait


def pair_worker(parked, never):
    register(parked)
    never.wait()  # MARK: pair-wait


def main(ready, pool):
    never = threading.Event()
    parked = threading.Semaphore(0)
    threads = [threading.Thread(target=pool_worker, args=(parked, never),
                                name="pool-%d\n\x1b[31m" % i)
               for i in range(pool)]
    threads += [threading.Thread(target=pair_worker, args=(parked, never),
                                 name="pair-%d" % i) for i in range(2)]
    for t in threads:
        t.daemon = True
        t.start()
    for _ in threads:
        parked.acquire()
    with _lock:
        info = {"pid": os.getpid(), "main_tid": native_tid(),
                "threads": dict(_tids)}
    tmp = ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.rename(tmp, ready)
    never.wait()  # MARK: main-wait


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
