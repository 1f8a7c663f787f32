"""Locks waited for again, or retried, by a thread or task: what holds
them is not what a `with` block says.

Usage: retaken_locks.py READY_FILE MODE

- thread: thread "retakes" enters `with lock:`, releases the lock by
  hand inside the block and, once thread "grabs" has taken it with a
  bare acquire() (and sleeps holding it), waits to take it again in the
  same block.  No deadlock: "grabs" holds the lock, and nothing says so.
- task: the same with an asyncio.Lock and two tasks of one loop.
- poll: thread "holder" sleeps inside `with lock:`; thread "poller"
  retries `lock.acquire(timeout=0.3)` at one line, forever.

READY_FILE gets, as JSON, "pid" and (thread, poll) "tids": the threads'
kernel ids by name, once the waiter waits.  Runs on 3.6+.
"""

import asyncio
import os
import sys
import threading
import time

from _ready import ready_when_started, write_ready
from _tids import native_tid

HOUR = 3600
tids = {}
released, grabbed = threading.Event(), threading.Event()


def retakes(lock):
    tids["retakes"] = native_tid()
    with lock:
        lock.release()
        released.set()
        grabbed.wait()
        lock.acquire()  # MARK: retake-thread


def grabs(lock):
    tids["grabs"] = native_tid()
    released.wait()
    lock.acquire()
    grabbed.set()
    time.sleep(HOUR)  # MARK: grabs-thread


async def retakes_task(lock, gave, took):
    async with lock:
        lock.release()
        gave.set()
        await took.wait()
        await lock.acquire()  # MARK: retake-task


async def grabs_task(lock, gave, took):
    await gave.wait()
    await lock.acquire()
    took.set()
    await asyncio.sleep(HOUR)  # MARK: grabs-task


async def tasks():
    lock, gave, took = asyncio.Lock(), asyncio.Event(), asyncio.Event()
    first = asyncio.ensure_future(retakes_task(lock, gave, took))
    second = asyncio.ensure_future(grabs_task(lock, gave, took))
    await took.wait()
    await asyncio.sleep(0.1)
    write_ready(sys.argv[1], {"pid": os.getpid()})
    await asyncio.gather(first, second)


def holder(lock):
    tids["holder"] = native_tid()
    with lock:
        grabbed.set()
        time.sleep(HOUR)  # MARK: poll-holder


def poller(lock):
    grabbed.wait()
    tids["poller"] = native_tid()
    while not lock.acquire(timeout=0.3):  # MARK: poll
        pass


mode = sys.argv[2]
if mode == "task":
    asyncio.new_event_loop().run_until_complete(tasks())
lock = threading.Lock()
pair = (retakes, grabs) if mode == "thread" else (holder, poller)
for f in pair:
    threading.Thread(target=f, name=f.__name__, args=(lock,),
                     daemon=True).start()
ready_when_started(sys.argv[1], tids, 2)
