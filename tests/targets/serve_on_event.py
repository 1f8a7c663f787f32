"""A server's main task resting for ever on an Event it makes at its
line, as tornado's and aiohttp's guides serve, while its handler is
stuck behind a lock.

Usage: serve_on_event.py READY_FILE [stored]

main() starts "handler", which waits on an asyncio.Lock that "holder"
holds while it waits on an Event nobody sets; then main() awaits
`asyncio.Event().wait()` ("forever"): nothing else can ever reach that
Event.  With "stored", main() keeps its Event in a global first, which
another part of the program could set: then no rest by design.
READY_FILE gets the pid and id() of main's Event (stored only), as
JSON.
"""

import asyncio
import os
import sys

from _ready import write_ready

KEPT = []


async def holder(lock, never):
    async with lock:
        await never.wait()  # MARK: holder


async def handler(lock):
    async with lock:  # MARK: handler
        pass


async def main(ready, stored):
    lock, never = asyncio.Lock(), asyncio.Event()
    tasks = [asyncio.ensure_future(holder(lock, never)),
             asyncio.ensure_future(handler(lock))]
    await asyncio.sleep(0.1)
    doc = {"pid": os.getpid(), "tasks": len(tasks)}
    if stored:
        KEPT.append(asyncio.Event())
        doc["event"] = id(KEPT[0])
    write_ready(ready, doc)
    if stored:
        await KEPT[0].wait()  # MARK: stored
    await asyncio.Event().wait()  # MARK: forever


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1], sys.argv[2:] == ["stored"]))
