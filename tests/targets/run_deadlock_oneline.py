"""run_deadlock.py's lock-order deadlock with each inner `with` on one
line (`with lock_b: pass`), and the second one taken by a bare
acquire() under another name: whatever the source says, both threads are
blocked on a lock (issue 16.11).

Usage: run_deadlock_oneline.py PIDS_FILE

Writes {"pid": ...} to PIDS_FILE once both workers are about to block,
then joins them (forever).  Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import threading

lock_a = threading.Lock()
lock_b = threading.Lock()
barrier = threading.Barrier(2)
grab = lock_a.acquire


def take_a_then_b():
    with lock_a:
        barrier.wait()
        with lock_b: pass  # MARK: a-blocked


def take_b_then_a():
    with lock_b:
        barrier.wait()
        grab()  # MARK: b-blocked


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
