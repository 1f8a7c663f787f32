"""A target for `run`'s grouping of alike generators in its samples.

Usage: alike_cms.py READY_FILE POOL

POOL threads each enter held() (a contextlib context manager: a
generator suspended at its yield until it is left) by calling its
__enter__(), as a library that keeps a context open across calls does
(pytest's yield fixtures), and park on one Event; two more enter kept()
and park the same way.  No `with` holds them: one would make their
generators idle by design, followed through the thread instead
(tests/test_cm_entered.py).  Parking lines carry
"# MARK: name" comments.  READY_FILE gets the pid and the addresses of
both kinds of generator (JSON, written atomically).

Must run unchanged on CPython 3.6 through 3.14.
"""

import contextlib
import os
import sys
import threading

from _parked import wait_parked
from _ready import write_ready
from _tids import native_tid

_lock = threading.Lock()
_gens = {"held": [], "kept": []}
_tids = {}              # thread -> native TID


@contextlib.contextmanager
def held():
    yield  # MARK: held-yield


@contextlib.contextmanager
def kept():
    yield  # MARK: kept-yield


def worker(make, parked, never):
    cm = make()
    cm.__enter__()
    try:
        with _lock:
            _gens[make.__name__].append("0x%x" % id(cm.gen))
            _tids[threading.current_thread()] = native_tid()
        parked.release()
        never.wait()  # MARK: cm-wait
    finally:
        cm.__exit__(None, None, None)


def main(ready, pool):
    never = threading.Event()
    parked = threading.Semaphore(0)
    makers = [held] * pool + [kept] * 2
    threads = [threading.Thread(target=worker, args=(make, parked, never),
                                daemon=True) for make in makers]
    for t in threads:
        t.start()
    for _ in threads:
        parked.acquire()
    with _lock:
        tids = [_tids[t] for t in threads]
    wait_parked(threads, tids)   # all in never.wait(), or run sees them move
    with _lock:
        write_ready(ready, {"pid": os.getpid(), "generators": _gens})
    never.wait()  # MARK: main-wait


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
