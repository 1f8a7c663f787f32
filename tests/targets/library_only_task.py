"""A task all in a library's code, parked on a plain future nothing
completes, gathered by the program's own coroutine (as aiohttp's
requests from s.get() are).

Usage: library_only_task.py READY_FILE.  Runs on 3.6+.

READY_FILE gets the pid, as JSON.
"""

import asyncio
import os
import sys

from _ready import write_ready


async def main(ready):
    never = asyncio.get_event_loop().create_future()
    inner = asyncio.ensure_future(asyncio.wait_for(never, 1000))
    write_ready(ready, {"pid": os.getpid()})
    await asyncio.gather(inner)  # MARK: gathers


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(sys.argv[1]))
