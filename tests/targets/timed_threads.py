"""Threads asleep or waiting under a timeout: what coroscope says of when
each comes back of itself.

Usage: timed_threads.py READY_FILE

- "sleeper": time.sleep(600) (3.11+: clock_nanosleep() to an absolute
  time; before, select() of no descriptors);
- "acquirer": lock.acquire(timeout=700) of a lock main() holds (a
  semaphore's timed wait: futex(FUTEX_WAIT_BITSET) to an absolute time,
  on CLOCK_REALTIME or CLOCK_MONOTONIC by version);
- "event": threading.Event().wait(800) (a Condition's: the same);
- "getter": queue.Queue().get(timeout=900) (the same);
- "selector": select.select() of a pipe nobody writes, for 1000 s
  (select(), the time left);
- "forever": lock.acquire() with no timeout.

READY_FILE gets, as JSON, "tids": each thread's kernel id by name, and
"due": time.monotonic() plus its seconds, taken just before each call.
"""

import os
import queue
import select
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

held = threading.Lock()
held.acquire()
tids, due = {}, {}
started = threading.Barrier(7)


def record(name, seconds):
    tids[name] = native_tid()
    started.wait()
    due[name] = time.monotonic() + seconds


def sleeper():
    record("sleeper", 600)
    time.sleep(600)  # MARK: timed-sleep


def acquirer():
    record("acquirer", 700)
    held.acquire(timeout=700)  # MARK: timed-acquire


def event():
    record("event", 800)
    threading.Event().wait(800)  # MARK: timed-event


def getter():
    record("getter", 900)
    try:
        queue.Queue().get(timeout=900)  # MARK: timed-get
    except queue.Empty:
        pass


def selector():
    r, w = os.pipe()
    record("selector", 1000)
    select.select([r], [], [], 1000)  # MARK: timed-select


def forever():
    record("forever", 0)
    held.acquire()  # MARK: untimed-acquire


for fn in (sleeper, acquirer, event, getter, selector, forever):
    threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
started.wait()
time.sleep(0.3)
write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids, "due": due})
while True:
    time.sleep(3600)
