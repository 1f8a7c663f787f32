"""Shared by test targets: wait until threads are parked in a wait.

A worker that says "ready" (releases a semaphore) just before it parks
is still on its way there for a moment; a sample taken then sees it at
another line, so it moved, and it is stuck for less than the others.
Runs on every CPython from 3.6 on.
"""

import sys
import time


def _places(threads):
    """Each thread's innermost frame's place when it is in
    Condition.wait() called from Event.wait() (both named "wait"), or
    None for the threads that are not."""
    frames = sys._current_frames()
    out = []
    for t in threads:
        f = frames.get(t.ident)
        if f is None or f.f_back is None or f.f_code.co_name != "wait" or \
                f.f_back.f_code.co_name != "wait":
            out.append(None)
        else:
            out.append((f.f_code, f.f_lineno))
    return out


def wait_parked(threads, timeout=10.0):
    """Wait (at most timeout seconds) until every thread sits in
    Event.wait() at the same line in two looks 20 ms apart."""
    deadline = time.monotonic() + timeout
    before = None
    while time.monotonic() < deadline:
        now = _places(threads)
        if None not in now and now == before:
            return
        before = now
        time.sleep(0.02)
    raise RuntimeError("threads not parked after %.0f s" % timeout)
