"""A client of a multiprocessing manager waiting on the manager's empty
queue: the manager's server process waits by design (its main thread
for the stop, its accepter for clients), and must not be blamed on the
line that started it.

Usage: mp_manager.py READY_FILE

READY_FILE gets, as JSON, "pid", "manager" (the server process's pid)
and "tids" ("MainThread").
"""

import multiprocessing
import os
import sys
import time

from _ready import write_ready
from _tids import native_tid


def main():
    manager = multiprocessing.get_context("fork").Manager()  # MARK: start
    queue = manager.Queue()
    time.sleep(0.3)
    write_ready(sys.argv[1], {"pid": os.getpid(),
                              "manager": manager._process.pid,
                              "tids": {"MainThread": native_tid()}})
    queue.get()  # MARK: get


if __name__ == "__main__":
    main()
