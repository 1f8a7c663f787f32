"""A target for `coroscope watch` naming who holds what a task waits on.

Usage: watch_locks.py READY_FILE

Task "holder" takes an asyncio.Lock and sleeps an hour in it; tasks
"waiter-0" and "waiter-1" wait for the lock.  Once both wait it writes
READY_FILE (JSON: pid) atomically.  Lines tests look for carry
"# MARK: name".
"""

import asyncio
import os
import sys

from _ready import write_ready


async def holder(lock):
    async with lock:  # MARK: lock-taken
        await asyncio.sleep(3600)  # MARK: lock-holder


async def waiter(lock):
    async with lock:  # MARK: lock-waiter
        pass


async def main(ready):
    lock = asyncio.Lock()
    loop = asyncio.get_event_loop()
    held = loop.create_task(holder(lock))
    await asyncio.sleep(0.05)
    waiters = [loop.create_task(waiter(lock)) for _ in range(2)]
    await asyncio.sleep(0.05)
    write_ready(ready, {"pid": os.getpid(),
                        "tasks": {"holder": "0x%x" % id(held),
                                  "waiters": ["0x%x" % id(w)
                                              for w in waiters]}})
    await asyncio.gather(held, *waiters)


if __name__ == "__main__":
    # (no asyncio.run() before 3.7)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(sys.argv[1]))
