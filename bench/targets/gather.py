"""Benchmark target: one task gathering COUNT tasks, each awaiting one
future that never completes.

Usage: gather.py READY_FILE COUNT

The shape of a fan-out (a batch of requests, a crawler's pages) frozen
mid-way: the wait-for graph has one gather node with COUNT children, and
every child is awaited by the main task through it.
"""

import asyncio
import sys

from _ready import announce


async def child(parked):
    await parked


async def main(ready, count):
    loop = asyncio.get_running_loop()
    parked = loop.create_future()
    batch = asyncio.gather(*[child(parked) for _ in range(count)])
    # Two turns of the loop start every child up to its await.
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    announce(ready, tasks=count + 1)
    await batch


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
