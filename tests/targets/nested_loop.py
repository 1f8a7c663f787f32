"""Test target: nest_asyncio (Debian's python3-nest-asyncio), as notebooks
use it: a task's step calls run_until_complete() on its own running loop,
which runs that loop again inside the step.

Usage: nested_loop.py READY_FILE idle|blocked

main()'s step runs the loop again until the task 'inner' is done, beside
a task asleep for an hour.  With "idle", inner sleeps for an hour in
asyncio.sleep() too: the thread waits for events in the nested loop's
select(), and every task will be woken by its timer.  With "blocked",
inner calls time.sleep(3600) in its step, inside the nested loop: that
loop, the only one, runs nothing more.  Writes READY_FILE ({"pid"}) from
inner's step, just before it sleeps.
"""
import asyncio
import os
import sys
import time

import nest_asyncio

from _ready import write_ready


async def sleeper():
    await asyncio.sleep(3600)  # MARK: sleeper


async def inner(ready, how):
    write_ready(ready, {"pid": os.getpid()})
    if how == "blocked":
        time.sleep(3600)  # MARK: inner-blocked
    await asyncio.sleep(3600)  # MARK: inner-sleep


def wait_for_inner(ready, how):
    loop = asyncio.get_event_loop()
    task = loop.create_task(inner(ready, how), name="inner")
    return loop.run_until_complete(task)  # MARK: nested


async def main(ready, how):
    asyncio.ensure_future(sleeper())
    await asyncio.sleep(0)
    wait_for_inner(ready, how)  # MARK: outer-step


if __name__ == "__main__":
    nest_asyncio.apply()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(sys.argv[1], sys.argv[2]))
