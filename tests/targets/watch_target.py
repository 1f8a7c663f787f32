"""A target for `coroscope watch`: some things stuck, some merely busy.

Usage: watch_target.py READY_FILE [--exit-after SECONDS]

The main thread runs an asyncio loop with four tasks:
  parked    awaits an Event that is never set            (stuck)
  napper    loops on asyncio.sleep(0.05)                 (not stuck)
  consumer  takes items from a queue that is being fed   (not stuck)
  feeder    puts an item in that queue every 20 ms       (not stuck)
and three more threads:
  locked    blocked on a lock that is never released     (stuck)
  napping   time.sleep(0.05) in a loop                   (not stuck)
  spinning  a pure-Python busy loop                      (busy)
and an executor's worker thread, "pooled_0", back in the executor's loop
after its one job (idle: waiting for work is what it is for).

Once everything runs it writes READY_FILE (JSON: pid, the threads' kernel
ids by name) atomically.  With --exit-after it exits that many seconds
after writing it.  Lines tests look for carry "# MARK: name".

Runs on CPython 3.7 through 3.14.
"""

import asyncio
import concurrent.futures
import json
import os
import sys
import threading
import time

_tids = {}
_tids_lock = threading.Lock()


def register(name):
    tid = threading.get_native_id() if hasattr(threading, "get_native_id") \
        else int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])
    with _tids_lock:
        _tids[name] = tid


def locked(lock, started):
    register("locked")
    started.set()
    lock.acquire()  # MARK: lock-acquire


def napping(started):
    register("napping")
    started.set()
    while True:
        time.sleep(0.05)  # MARK: thread-nap


def spinning(started):
    register("spinning")
    started.set()
    n = 0
    # one line, so that every sample finds it there
    while True: n += 1  # noqa: E701  # MARK: spin


async def parked(event):
    await event.wait()  # MARK: event-wait


async def napper():
    while True:
        await asyncio.sleep(0.05)  # MARK: task-nap


async def consumer(queue):
    while True:
        await queue.get()  # MARK: queue-get


async def feeder(queue):
    n = 0
    while True:
        n += 1
        queue.put_nowait(n)
        await asyncio.sleep(0.02)


def named(task, name):
    if hasattr(task, "set_name"):
        task.set_name(name)
    return task


def write_ready(path):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "tids": _tids,
                   "version": list(sys.version_info[:3])}, f)
    os.rename(tmp, path)


async def main(ready, exit_after):
    register("main")
    event = asyncio.Event()
    queue = asyncio.Queue()
    loop = asyncio.get_event_loop()
    named(loop.create_task(parked(event)), "parked")
    named(loop.create_task(napper()), "napper")
    named(loop.create_task(consumer(queue)), "consumer")
    named(loop.create_task(feeder(queue)), "feeder")
    await asyncio.sleep(0.2)
    write_ready(ready)
    if exit_after is None:
        await asyncio.Event().wait()
    await asyncio.sleep(exit_after)


def start(target, *args):
    started = threading.Event()
    t = threading.Thread(target=target, args=args + (started,),
                         name=target.__name__, daemon=True)
    t.start()
    started.wait()


if __name__ == "__main__":
    ready = sys.argv[1]
    exit_after = None
    if len(sys.argv) > 3 and sys.argv[2] == "--exit-after":
        exit_after = float(sys.argv[3])
    lock = threading.Lock()
    lock.acquire()
    start(locked, lock)
    start(napping)
    start(spinning)
    pool = concurrent.futures.ThreadPoolExecutor(
        1, thread_name_prefix="pooled")
    pool.submit(register, "pooled").result()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(ready, exit_after))
    os._exit(0)
