"""Benchmark target: COUNT asyncio tasks, each DEPTH coroutines deep.

Usage: tasks.py READY_FILE COUNT DEPTH

Every task runs a chain of DEPTH coroutines whose innermost one awaits a
future that never completes.  Once all are parked the main coroutine
writes READY_FILE and awaits another such future, so the event loop sits
in epoll_wait with COUNT + 1 pending tasks: the shape of a busy server
frozen between two events.
"""

import asyncio
import sys

from _ready import announce


async def chain(depth, parked):
    if depth > 1:
        await chain(depth - 1, parked)
    else:
        await parked


async def main(ready, count, depth):
    loop = asyncio.get_running_loop()
    parked = loop.create_future()
    tasks = [loop.create_task(chain(depth, parked)) for _ in range(count)]
    # One turn of the loop runs every task up to its await.
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    announce(ready, tasks=len(tasks), depth=depth)
    await loop.create_future()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
