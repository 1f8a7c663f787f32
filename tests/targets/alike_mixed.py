"""A target for `run`'s grouping of alike tasks of two frameworks.

Usage: alike_mixed.py READY_FILE COUNT

COUNT asyncio tasks (main thread) and COUNT trio tasks (a thread of their
own) all park at one line of one coroutine, parked_at(), awaiting what
they are given: a future that is never done, trio.sleep_forever().  They
share a place, but they are two kinds of task: the samples must not put
them on one line.  The parking line carries "# MARK: mixed-await".
READY_FILE gets the pid and both kinds' task names (JSON, written
atomically) once every task is parked.

Needs trio (Debian's python3-trio on /usr/bin/python3.11).
"""

import asyncio
import os
import sys
import threading

import trio

from _ready import write_ready


async def parked_at(awaitable):
    await awaitable  # MARK: mixed-await


def trio_side(count, names, parked):
    async def main():
        async with trio.open_nursery() as nursery:
            for i in range(count):
                name = "trio-%d" % i
                names.append(name)
                nursery.start_soon(parked_at, trio.sleep_forever(),
                                   name=name)
            # Each runs up to its await before the nursery's body goes on.
            await trio.sleep(0.1)
            parked.set()

    trio.run(main)


async def asyncio_side(ready, count, trio_names, trio_parked):
    never = asyncio.get_running_loop().create_future()
    names = ["aio-%d" % i for i in range(count)]
    tasks = [asyncio.ensure_future(parked_at(never)) for _ in names]
    for task, name in zip(tasks, names):
        task.set_name(name)
    await asyncio.sleep(0.1)
    # Bounded: the trio thread parks its tasks at once.
    for _ in range(100):
        if trio_parked.is_set():
            break
        await asyncio.sleep(0.05)
    write_ready(ready, {"pid": os.getpid(), "asyncio": names,
                        "trio": list(trio_names)})
    await asyncio.gather(*tasks)


def main(ready, count):
    trio_names, trio_parked = [], threading.Event()
    threading.Thread(target=trio_side, args=(count, trio_names, trio_parked),
                     daemon=True).start()
    asyncio.run(asyncio_side(ready, count, trio_names, trio_parked))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
