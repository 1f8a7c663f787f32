"""A program polling for something that never comes: its main thread
sleeps in time.sleep() at the same line at every sample, and nothing
else is stuck; a worker thread sleeps the same way, joined by no one.
As a pytest test too (test_poll_forever below), under pytest.

Usage: poll_forever.py READY_FILE

READY_FILE gets, as JSON, "pid" and "tids" by thread name.
"""

import os
import sys
import threading
import time

tids = {}


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.4)  # MARK: poll


def worker(native_tid):
    tids["poller"] = native_tid()
    time.sleep(3600)  # MARK: long-sleep


def test_poll_forever():
    wait_for("/nonexistent/coroscope-poll")


if __name__ == "__main__":
    from _ready import write_ready
    from _tids import native_tid

    threading.Thread(target=worker, args=(native_tid,), name="poller",
                     daemon=True).start()
    while "poller" not in tids:
        time.sleep(0.01)
    tids["MainThread"] = native_tid()
    write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids})
    wait_for("/nonexistent/coroscope-poll")
