"""Deep await chains (issue 16.10).

Usage: deep_chains.py READY_FILE NTASKS NGENS

The main task awaits task "chain-0", which awaits "chain-1", and so on
to "chain-<NTASKS-1>", which waits on an event nobody sets.  Another task,
"agens", iterates an async generator that iterates another, NGENS deep;
the innermost waits on the event too.  Writes {"pid": ...} to READY_FILE
once every task is parked.  Needs CPython 3.8+ (task names).
"""

import asyncio
import json
import os
import sys

sys.setrecursionlimit(100000)


async def link(n, last, event):
    if n == last:
        await event.wait()  # MARK: chain-end
        return
    await asyncio.get_event_loop().create_task(
        link(n + 1, last, event), name="chain-%d" % (n + 1))


async def agen(n, event):
    if n == 0:
        await event.wait()  # MARK: agen-end
        yield 0
        return
    async for x in agen(n - 1, event):  # MARK: agen-link
        yield x


async def iterate(ngens, event):
    async for _ in agen(ngens - 1, event):
        pass


async def main(ready_file, ntasks, ngens):
    loop = asyncio.get_event_loop()
    event = asyncio.Event()
    chain = loop.create_task(link(0, ntasks - 1, event), name="chain-0")
    gens = loop.create_task(iterate(ngens, event), name="agens")
    # Let every task of the chain start and park.
    for _ in range(ntasks + ngens + 10):
        await asyncio.sleep(0)
    with open(ready_file + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(ready_file + ".tmp", ready_file)
    await asyncio.gather(chain, gens)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
