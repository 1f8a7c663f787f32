"""A hanging command for `coroscope run`: two threads that take two locks
in opposite orders, a barrier making sure each holds its first lock
before it asks for the second.

Usage: run_deadlock.py PIDS_FILE

Writes {"pid": ...} to PIDS_FILE once both workers are about to block,
then joins them (forever).
Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import threading

lock_a = threading.Lock()
lock_b = threading.Lock()
barrier = threading.Barrier(2)


def take_a_then_b():
    with lock_a:  # MARK: a-takes
        barrier.wait()
        with lock_b:  # MARK: a-blocked
            pass


def take_b_then_a():
    with lock_b:  # MARK: b-takes
        barrier.wait()
        with lock_a:  # MARK: b-blocked
            pass


if __name__ == "__main__":
    workers = [threading.Thread(target=take_a_then_b, name="worker-a"),
               threading.Thread(target=take_b_then_a, name="worker-b")]
    for w in workers:
        w.start()
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    for w in workers:
        w.join()  # MARK: main-joins
