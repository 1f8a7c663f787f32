"""Tasks named so that the name would not show: empty, and blank at
its ends; one named plainly; each parked on an Event of its own.

Usage: blank_task_names.py READY_FILE.  Runs on 3.8+ (task names).

READY_FILE gets the pid, as JSON.
"""

import asyncio
import os
import sys

from _ready import write_ready


async def parked(ev):
    await ev.wait()


async def main(ready):
    for name in ("", " pad ", "plain"):
        asyncio.ensure_future(parked(asyncio.Event())).set_name(name)
    await asyncio.sleep(0.1)
    write_ready(ready, {"pid": os.getpid()})
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.new_event_loop().run_until_complete(main(sys.argv[1]))
