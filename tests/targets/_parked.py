"""Shared by test targets: wait until threads are parked in a wait.

A worker that says "ready" (releases a semaphore) just before it parks
is still on its way there for a moment; a sample taken then sees it at
another line, or sees it run (the kernel counts its CPU time and
timeslices), so it moved, and it is stuck for less than the others.
Runs on every CPython from 3.6 on.
"""

import sys
import time


def _kernel(tid):
    """(state, timeslices run) of this process's thread tid, or None."""
    try:
        with open("/proc/self/task/%d/stat" % tid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open("/proc/self/task/%d/schedstat" % tid) as f:
            runs = f.read().split()[2]
    except (OSError, IndexError):
        return None
    return state, runs


def _places(threads, tids):
    """Each thread's innermost frame's place when it is in
    Condition.wait() called from Event.wait() (both named "wait") and
    asleep in the kernel, with its timeslices; None for the others."""
    frames = sys._current_frames()
    out = []
    for t, tid in zip(threads, tids):
        f = frames.get(t.ident)
        k = _kernel(tid)
        if f is None or f.f_back is None or f.f_code.co_name != "wait" or \
                f.f_back.f_code.co_name != "wait" or k is None or \
                k[0] != "S":
            out.append(None)
        else:
            out.append((f.f_code, f.f_lineno, k[1]))
    return out


def wait_parked(threads, tids, timeout=10.0):
    """Wait (at most timeout seconds) until every thread (kernel ids
    tids, in the same order) sits asleep in Event.wait(), at the same
    line and after as many timeslices in two looks 50 ms apart."""
    deadline = time.monotonic() + timeout
    before = None
    while time.monotonic() < deadline:
        now = _places(threads, tids)
        if None not in now and now == before:
            return
        before = now
        time.sleep(0.05)
    raise RuntimeError("threads not parked after %.0f s" % timeout)
