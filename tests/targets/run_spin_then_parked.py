"""A thread that computes at first, then parks for good.

Usage: run_spin_then_parked.py READY_FILE SPIN

The main thread computes for SPIN seconds from its start (a loop at one
line), then writes READY_FILE ("pid") and waits on an Event nothing
sets.
"""

import os
import sys
import threading
import time

from _ready import write_ready

start = time.monotonic()
n = 0
while time.monotonic() - start < float(sys.argv[2]):
    n += 1  # MARK: spin
write_ready(sys.argv[1], {"pid": os.getpid()})
threading.Event().wait()  # MARK: parked
