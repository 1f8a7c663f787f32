"""A `coroscope run` target for the samples taken before the dump: some
things stuck, some only looking so in a single dump.

Usage: run_sampled.py READY_FILE

The main thread runs an asyncio loop with two tasks:
  parked    awaits an Event that is never set              (stuck)
  napper    loops on asyncio.sleep(0.01), always one line   (not stuck)
and two more threads:
  spinning  a pure-Python busy loop on one line              (busy)
  locked    acquires a threading.Lock it already holds       (stuck)
  c-locked  locks a pthread mutex it already holds, through
            ctypes: a lock no Python object stands for        (stuck, in C)

Once everything runs it writes READY_FILE (JSON: pid, the threads'
kernel ids by name) atomically.  Runs on CPython 3.7 through 3.14.
"""

import asyncio
import ctypes
import json
import os
import sys
import threading

_tids = {}


def native_id():
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])


def spinning(started):
    _tids["spinning"] = native_id()
    started.set()
    n = 0
    while True: n += 1  # noqa: E701  # MARK: spin


def locked(started):
    _tids["locked"] = native_id()
    lock = threading.Lock()
    lock.acquire()
    started.set()
    lock.acquire()  # MARK: lock-twice


def c_locked(started):
    _tids["c-locked"] = native_id()
    libc = ctypes.CDLL(None)
    # zeroed: PTHREAD_MUTEX_INITIALIZER, a normal mutex, which a second
    # lock by its owner waits for forever (glibc's is 40 bytes)
    mutex = ctypes.create_string_buffer(64)
    libc.pthread_mutex_lock(mutex)
    started.set()
    libc.pthread_mutex_lock(mutex)  # MARK: c-lock-twice


async def parked(event):
    await event.wait()  # MARK: event-wait


async def napper():
    while True:
        await asyncio.sleep(0.01)  # MARK: task-nap


async def main(ready):
    event = asyncio.Event()
    tasks = [asyncio.ensure_future(parked(event)),
             asyncio.ensure_future(napper())]
    for task, name in zip(tasks, ("parked", "napper")):
        task.set_name(name) if hasattr(task, "set_name") else None
    for target, name in ((spinning, "spinning"), (locked, "locked"),
                         (c_locked, "c-locked")):
        started = threading.Event()
        threading.Thread(target=target, args=(started,), name=name,
                         daemon=True).start()
        started.wait()
    await asyncio.sleep(0.1)
    _tids["main"] = native_id()
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "tids": _tids}, f)
    os.rename(ready + ".tmp", ready)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
