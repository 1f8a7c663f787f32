"""The stuck child of run_await_cycle.py: it takes a lock it already
holds, so its main thread blocks for good on a known line.

Usage: run_child.py READY_FILE
"""

import sys
import threading

lock = threading.Lock()


def take_twice(ready):
    lock.acquire()
    open(ready, "w").close()
    lock.acquire()  # MARK: child-blocked


if __name__ == "__main__":
    take_twice(sys.argv[1])
