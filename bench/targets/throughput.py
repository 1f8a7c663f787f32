"""Benchmark target: an event loop doing steady work, and counting it.

Usage: throughput.py READY_FILE COUNTER_FILE PARKED

WORKERS tasks each do a little pure-Python work and yield to the loop,
forever, adding to one counter; every 0.1 s the counter is written to
COUNTER_FILE (atomically).  PARKED more tasks await a future that never
completes, so that each read of the process has tasks to walk.  The
runner reads the counter over a few seconds with and without
`coroscope watch` to see what watching costs the target.
"""

import asyncio
import os
import sys

from _ready import announce

WORKERS = 4


async def worker(count):
    while True:
        sum(range(100))
        count[0] += 1
        await asyncio.sleep(0)


async def reporter(path, count):
    tmp = path + ".tmp"
    while True:
        with open(tmp, "w") as f:
            f.write("%d\n" % count[0])
        os.rename(tmp, path)
        await asyncio.sleep(0.1)


async def main(ready, counter_path, parked):
    loop = asyncio.get_running_loop()
    never = loop.create_future()
    count = [0]
    tasks = [loop.create_task(never_done(never)) for _ in range(parked)]
    tasks += [loop.create_task(worker(count)) for _ in range(WORKERS)]
    tasks.append(loop.create_task(reporter(counter_path, count)))
    await asyncio.sleep(0.3)
    announce(ready, tasks=len(tasks))
    await never


async def never_done(fut):
    await fut


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
