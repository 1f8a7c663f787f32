"""A target for the text report's grouping of alike threads.

Usage: alike_threads.py READY_FILE POOL [TAG]

POOL threads ("pool-N" and TAG, each name carrying a newline and an
escape sequence, as hostile names do) park on one line of pool_worker; two
threads ("pair-N") park on one line of pair_worker; the main thread parks
in main.  CPOOL more threads that never run Python (pthread_create() on
libc's pause(), through ctypes) wait in pause().  Parking lines carry
"# MARK: name" comments.  READY_FILE gets the pid, each Python thread's
kernel TID and name, and the C threads' TIDs (JSON, written atomically).

Must run unchanged on CPython 3.6 through 3.14.
"""

import ctypes
import os
import sys
import threading
import time

from _parked import wait_parked
from _ready import write_ready
from _tids import native_tid

_lock = threading.Lock()
_tids = {}              # name -> native TID
CPOOL = 4


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


def start_c_threads(count):
    """count threads running libc's pause() from their start: no Python
    thread state, no Python frame.  Their TIDs: the process's threads
    that were not there before."""
    before = set(int(t) for t in os.listdir("/proc/self/task"))
    libc = ctypes.CDLL(None)
    pause = ctypes.cast(libc.pause, ctypes.c_void_p)
    libc.pthread_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p]
    for _ in range(count):
        handle = ctypes.c_ulong()
        if libc.pthread_create(ctypes.byref(handle), None, pause, None):
            raise OSError("pthread_create failed")
    # Bounded: a few seconds for the kernel to list them.
    for _ in range(500):
        new = set(int(t) for t in os.listdir("/proc/self/task")) - before
        if len(new) == count:
            return sorted(new)
        time.sleep(0.01)
    raise OSError("C threads not seen: %r" % sorted(new))


def main(ready, pool, tag=""):
    never = threading.Event()
    parked = threading.Semaphore(0)
    threads = [threading.Thread(target=pool_worker, args=(parked, never),
                                name="pool-%d%s\n\x1b[31m" % (i, tag))
               for i in range(pool)]
    threads += [threading.Thread(target=pair_worker, args=(parked, never),
                                 name="pair-%d" % i) for i in range(2)]
    for t in threads:
        t.daemon = True
        t.start()
    for _ in threads:
        parked.acquire()
    with _lock:
        tids = [_tids[t.name] for t in threads]
    wait_parked(threads, tids)   # all in never.wait(), or run sees them move
    cthreads = start_c_threads(CPOOL)
    with _lock:
        info = {"pid": os.getpid(), "main_tid": native_tid(),
                "threads": dict(_tids), "cthreads": cthreads}
    write_ready(ready, info)
    never.wait()  # MARK: main-wait


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:4])
