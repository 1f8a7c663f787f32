"""One await chain and one `yield from` chain, each DEPTH deep (past the
1024 links coroscope once cut chains at).

Usage: deep_await.py READY_FILE DEPTH.  The ready file holds the task's
id and its chain, and the generator chain, as the interpreter sees them:
id() of each coroutine or generator, outermost first.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import sys

from _ready import write_ready


def chain(obj):
    out = []
    while hasattr(obj, "cr_await") or hasattr(obj, "gi_yieldfrom"):
        out.append(id(obj))
        obj = obj.cr_await if hasattr(obj, "cr_await") else obj.gi_yieldfrom
    return out


def nested(n):
    if n == 0:
        yield 1  # MARK: gen-end
    else:
        yield from nested(n - 1)


async def deep(n, event):
    if n == 0:
        await event.wait()  # MARK: coro-end
    else:
        await deep(n - 1, event)


async def main(ready, depth):
    event = asyncio.Event()
    coro = deep(depth, event)
    task = asyncio.ensure_future(coro)
    gen = nested(depth)
    next(gen)
    await asyncio.sleep(0.2)
    write_ready(ready, {"task": id(task), "task_chain": chain(coro),
                        "gen_chain": chain(gen)})
    await event.wait()


if __name__ == "__main__":
    sys.setrecursionlimit(20000)
    if hasattr(asyncio, "run"):
        asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    else:  # 3.6
        asyncio.get_event_loop().run_until_complete(
            main(sys.argv[1], int(sys.argv[2])))
