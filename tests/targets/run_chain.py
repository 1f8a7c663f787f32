"""A `coroscope run` target: a lock with one direct waiter but a chain of
tasks behind it, and an Event with two direct waiters.

Usage: run_chain.py READY_FILE

  holder   holds an asyncio.Lock (`async with`), parked on a future
  waiter   waits for that lock; three `parent` tasks await `waiter`
  e1, e2   await an Event that is never set

Counting direct waiters only, the Event (2) outranks the lock (1); four
tasks (waiter and its parents) are blocked behind the lock in all.  Runs on CPython 3.7+.
"""

import asyncio
import os
import sys


async def holder(lock, never):
    async with lock:
        await never  # MARK: chain-holder


async def waiter(lock):
    async with lock:  # MARK: chain-waiter
        pass


async def parent(task):
    await task


async def on_event(event):
    await event.wait()  # MARK: chain-event


async def main(ready):
    loop = asyncio.get_running_loop()
    lock, event, never = asyncio.Lock(), asyncio.Event(), loop.create_future()
    tasks = [loop.create_task(holder(lock, never))]
    await asyncio.sleep(0.05)
    w = loop.create_task(waiter(lock))
    tasks += [w] + [loop.create_task(parent(w)) for _ in range(3)]
    tasks += [loop.create_task(on_event(event)) for _ in range(2)]
    await asyncio.sleep(0.1)
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    await never


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
