"""A thread that wakes once in a while and sleeps again at one line (a
heartbeat, a metrics reporter), beside one asleep for good.

Usage: heartbeat.py READY_FILE PERIOD

- "heartbeat": counts a beat, then time.sleep(PERIOD), forever;
- "sleeper": time.sleep(3600) once.

READY_FILE gets, as JSON, "tids": each thread's kernel id by name, once
both have started; the main thread then sleeps for good.
"""

import sys
import threading
import time

from _ready import ready_when_started
from _tids import native_tid

PERIOD = float(sys.argv[2])
tids = {}
beats = 0


def heartbeat():
    global beats
    tids["heartbeat"] = native_tid()
    while True:
        beats += 1
        time.sleep(PERIOD)  # MARK: beat


def sleeper():
    tids["sleeper"] = native_tid()
    time.sleep(3600)  # MARK: asleep


for f in (heartbeat, sleeper):
    threading.Thread(target=f, name=f.__name__, daemon=True).start()
ready_when_started(sys.argv[1], tids, 2)
