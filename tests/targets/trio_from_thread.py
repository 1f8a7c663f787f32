"""A deadlock through trio.from_thread.run(): the main task holds a
trio.Lock and runs worker() in a thread (trio.to_thread.run_sync); the
worker calls trio.from_thread.run(needs_lock), whose system task waits
for that lock.  Main task -> thread -> system task -> lock -> main task.

Usage: trio_from_thread.py READY_FILE

A "reporter" task writes READY_FILE (JSON: pid, the worker's kernel tid)
once the system task waits for the lock.  Needs trio (Debian's
python3-trio on /usr/bin/python3.11, pyenv's 3.11).
"""

import os
import sys

import trio

from _ready import write_ready
from _tids import native_tid

_worker = {}


async def needs_lock(lock):
    async with lock:  # MARK: from-thread-waits
        pass


def worker(lock):
    _worker["tid"] = native_tid()
    trio.from_thread.run(needs_lock, lock)  # MARK: from-thread-call


async def report(lock, ready):
    # Bounded: 10 s at most.
    for _ in range(1000):
        if lock.statistics().tasks_waiting == 1 and "tid" in _worker:
            break
        await trio.sleep(0.01)
    write_ready(ready, {"pid": os.getpid(), "worker_tid": _worker.get("tid")})


async def main(ready):
    lock = trio.Lock()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(report, lock, ready, name="reporter")
        async with lock:
            await trio.to_thread.run_sync(worker, lock)  # MARK: from-thread-holder


trio.run(main, sys.argv[1])
