"""A target for `coroscope watch` on generators no task owns.

Usage: watch_gens_target.py READY_FILE

  abandoned  a generator started once, then never resumed      (stuck)
  counting   a generator a thread iterates every 20 ms          (not stuck)
  unstarted  a coroutine created and never awaited              (stuck)

Once the thread runs it writes READY_FILE (JSON: pid, the generators'
addresses, the iterating thread's kernel id) atomically, then the main
thread sleeps.  Lines tests look for carry "# MARK: name".

Runs on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import threading
import time


def abandoned():
    yield 1  # MARK: gen-abandoned
    yield 2


def counting():
    n = 0
    while True:
        n += 1
        yield n  # MARK: gen-counting


async def unstarted():
    return 1  # MARK: coro-unstarted


def iterate(gen, started):
    started.set()
    for _ in gen:
        time.sleep(0.02)


def native_id():
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])


if __name__ == "__main__":
    ready = sys.argv[1]
    parked = abandoned()
    next(parked)
    steady = counting()
    coro = unstarted()
    tids = {}
    started = threading.Event()

    def run():
        tids["iterating"] = native_id()
        iterate(steady, started)

    threading.Thread(target=run, name="iterating", daemon=True).start()
    started.wait()
    tmp = ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "tids": tids,
                   "generators": {"abandoned": hex(id(parked)),
                                  "counting": hex(id(steady)),
                                  "unstarted": hex(id(coro))},
                   "version": list(sys.version_info[:3])}, f)
    os.rename(tmp, ready)
    while True:
        time.sleep(3600)  # MARK: main-sleep
