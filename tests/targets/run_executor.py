"""A target for `coroscope run`'s stuck tasks whose wait is a job on a
worker thread.

Usage: run_executor.py READY_FILE

Task "offload" awaits loop.run_in_executor() of a job that sleeps for an
hour; task "locked-offload" awaits one whose job blocks on a
threading.Lock the main thread took with a bare acquire().  The jobs'
lines carry "# MARK: job-sleep" and "# MARK: job-lock", the tasks'
"# MARK: await-sleep" and "# MARK: await-lock".  READY_FILE gets the pid
and each job's kernel TID (JSON, written atomically) once both jobs run.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import os
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

lock = threading.Lock()
tids = {}
started = threading.Semaphore(0)


def sleeper():
    tids["sleeper"] = native_tid()
    started.release()
    time.sleep(3600)  # MARK: job-sleep


def locker():
    tids["locker"] = native_tid()
    started.release()
    with lock:  # MARK: job-lock
        pass


async def offload(job):
    loop = asyncio.get_event_loop()
    await loop.run_in_executor(None, job)  # MARK: await-sleep


async def locked_offload(job):
    loop = asyncio.get_event_loop()
    await loop.run_in_executor(None, job)  # MARK: await-lock


async def main(ready):
    lock.acquire()
    tasks = [asyncio.ensure_future(offload(sleeper)),
             asyncio.ensure_future(locked_offload(locker))]
    if hasattr(tasks[0], "set_name"):
        tasks[0].set_name("offload")
        tasks[1].set_name("locked-offload")
    # Bounded: both jobs start at once on the default executor.
    for _ in range(2):
        while not started.acquire(blocking=False):
            await asyncio.sleep(0.01)
    write_ready(ready, {"pid": os.getpid(), "tids": tids})
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
