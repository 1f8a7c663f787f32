"""Alike threads in timed waits: run's causes show each group on one
line, with the span of their timeouts.

Usage: alike_timed_threads.py READY_FILE

- "ev-0" .. "ev-3": one Event nobody sets, waited on from one line with
  timeouts of 600, 602, 604 and 606 s;
- "lk-0" .. "lk-3": one Lock main() holds, acquired from one line with
  timeouts of 700, 702, 704 and 706 s.

READY_FILE gets, as JSON, "tids": each thread's kernel id by name, and
"due": time.monotonic() plus its seconds, taken just before each call.
"""

import os
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

never = threading.Event()
held = threading.Lock()
held.acquire()
tids, due = {}, {}
started = threading.Barrier(9)


def record(name, seconds):
    tids[name] = native_tid()
    started.wait()
    due[name] = time.monotonic() + seconds


def waiter(name, seconds):
    record(name, seconds)
    never.wait(seconds)  # MARK: alike-event


def acquirer(name, seconds):
    record(name, seconds)
    held.acquire(timeout=seconds)  # MARK: alike-acquire


for i in range(4):
    for fn, prefix, base in ((waiter, "ev", 600), (acquirer, "lk", 700)):
        name = "%s-%d" % (prefix, i)
        threading.Thread(target=fn, name=name, args=(name, base + 2 * i),
                         daemon=True).start()
started.wait()
time.sleep(0.3)
write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids, "due": due})
while True:
    time.sleep(3600)
