"""A program polling for something that never comes: its main thread
sleeps in time.sleep() at the same line at every sample, and nothing
else is stuck; a worker thread sleeps the same way, joined by no one.
As a pytest test too (test_poll_forever below), under pytest.

Usage: poll_forever.py READY_FILE [fast | late]

With "fast", the main thread polls every 0.1 s: a sleep the stop finds
due within 0.1 s, whose deadline the dump leaves out.  With "late", it
first works at another line (short sleeps) until 2.5 s after its
start, then polls every 0.4 s: a poll that begins during the samples.

READY_FILE gets, as JSON, "pid" and "tids" by thread name.
"""

import os
import sys
import threading
import time

START = time.monotonic()
tids = {}


def wait_for(path, every=0.4):
    while not os.path.exists(path):
        time.sleep(every)  # MARK: poll


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
    if sys.argv[2:] == ["late"]:
        while time.monotonic() < START + 2.5:
            time.sleep(0.05)  # MARK: late-work
    wait_for("/nonexistent/coroscope-poll",
             0.1 if sys.argv[2:] == ["fast"] else 0.4)
