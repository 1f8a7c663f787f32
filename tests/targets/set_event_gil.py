"""The main thread in Event.wait() of an Event another thread set, then
kept from returning: that thread holds the GIL in one long C call (a
regular expression's catastrophic backtracking), from the instant it
set the Event.

Usage: set_event_gil.py READY_FILE.  Runs on 3.6+.  It burns a CPU
until killed.  READY_FILE gets the pid and the hog's tid, as JSON,
before the hog sets the Event: a test waits until the hog has burnt
CPU.
"""

import os
import re
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

EMAIL = re.compile(r"^([a-zA-Z0-9]+)*@example\.com$")


def hog(ev, ready):
    time.sleep(0.2)   # (the main thread parks in its wait meanwhile)
    write_ready(ready, {"pid": os.getpid(), "hog": native_tid()})
    ev.set()
    EMAIL.match("a" * 60 + "!")  # MARK: hog


started = threading.Event()
threading.Thread(target=hog, args=(started, sys.argv[1]),
                 name="hog").start()
started.wait()  # MARK: wait
