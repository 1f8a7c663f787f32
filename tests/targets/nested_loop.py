"""Test target: nest_asyncio (Debian's python3-nest-asyncio), as notebooks
use it: a task's step calls run_until_complete() on its own running loop,
which runs that loop again inside the step.

Usage: nested_loop.py READY_FILE idle|blocked|lock

main()'s step runs the loop again until the task 'inner' is done, beside
a task asleep for an hour.  With "idle", inner sleeps for an hour in
asyncio.sleep() too: the thread waits for events in the nested loop's
select(), and every task will be woken by its timer.  With "blocked",
inner calls time.sleep(3600) in its step, inside the nested loop: that
loop, the only one, runs nothing more.  With "lock", main() holds an
asyncio.Lock while it runs the loop again, and inner waits for that
lock: a deadlock (nest_asyncio's Futures are asyncio's Python ones, each
with a generator frame of its own under Lock.acquire()).  Writes
READY_FILE ({"pid"}) from inner's step, just before it sleeps or waits.
"""
import asyncio
import os
import sys
import time

import nest_asyncio

from _ready import write_ready


async def sleeper():
    await asyncio.sleep(3600)  # MARK: sleeper


async def inner(ready, how, lock):
    write_ready(ready, {"pid": os.getpid()})
    if how == "blocked":
        time.sleep(3600)  # MARK: inner-blocked
    if how == "lock":
        async with lock:  # MARK: inner-lock
            pass
    await asyncio.sleep(3600)  # MARK: inner-sleep


def wait_for_inner(ready, how, lock):
    loop = asyncio.get_event_loop()
    task = loop.create_task(inner(ready, how, lock), name="inner")
    return loop.run_until_complete(task)  # MARK: nested


async def main(ready, how):
    asyncio.ensure_future(sleeper())
    await asyncio.sleep(0)
    lock = asyncio.Lock()
    if how == "lock":
        async with lock:  # MARK: outer-lock
            wait_for_inner(ready, how, lock)
    wait_for_inner(ready, how, lock)  # MARK: outer-step


if __name__ == "__main__":
    nest_asyncio.apply()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(sys.argv[1], sys.argv[2]))
