"""A target whose threads have been off their CPUs for known times.

Usage: offcpu_target.py READY_FILE

  blocked   takes a lock that is never released, after noting the
            monotonic time it does so
  spinner   runs a loop forever, started once 'blocked' has settled:
            always running or runnable
  main      sleeps

'blocked' has settled once the kernel's count of its runs
(/proc/self/task/TID/schedstat) stays the same for 0.3 s: settled_at is
when the main thread first saw that last count, so the thread last ran
between blocked_at and settled_at (on a loaded machine it may get its
CPU, or the GIL, well after blocked_at).

READY_FILE (JSON): pid, the threads' kernel ids by name, blocked_at and
settled_at (time.monotonic(): the test's clock too, CLOCK_MONOTONIC).
"""

import os
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

lock = threading.Lock()
lock.acquire()
tids = {"main": native_tid()}
noted = threading.Event()
blocked_at = []


def blocked():
    tids["blocked"] = native_tid()
    blocked_at.append(time.monotonic())
    noted.set()
    lock.acquire()  # MARK: blocked


def spinner():
    tids["spinner"] = native_tid()
    while True:
        pass


def runs(tid):
    with open("/proc/self/task/%d/schedstat" % tid) as f:
        return int(f.read().split()[2])


def settle(tid):
    """When the thread's last run count was first seen, once it has
    held for 0.3 s (bounded: 60 s)."""
    last, seen = runs(tid), time.monotonic()
    deadline = seen + 60
    while time.monotonic() < deadline:
        time.sleep(0.02)
        now = runs(tid)
        if now != last:
            last, seen = now, time.monotonic()
        elif time.monotonic() - seen >= 0.3:
            break
    return seen


threading.Thread(target=blocked, name="blocked").start()
noted.wait()
settled_at = settle(tids["blocked"])
threading.Thread(target=spinner, name="spinner").start()
while "spinner" not in tids:
    time.sleep(0.01)
write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids,
                          "blocked_at": blocked_at[0],
                          "settled_at": settled_at})
while True:
    time.sleep(3600)
