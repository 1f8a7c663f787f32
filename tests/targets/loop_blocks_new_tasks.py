"""Handlers gathered on a loop whose first handler blocks it in
time.sleep(): the others never start.

Usage: loop_blocks_new_tasks.py READY_FILE.  Runs on 3.6+.

READY_FILE gets the pid, as JSON, just before the loop blocks.
"""

import asyncio
import os
import sys
import time

from _ready import write_ready


async def handler(ready, first):  # MARK: handler-def
    if first:
        write_ready(ready, {"pid": os.getpid()})
        time.sleep(3600)  # MARK: blocks
    await asyncio.sleep(0)


async def main(ready):
    # (scheduled in this order, run in it: the first blocks the loop)
    tasks = [asyncio.ensure_future(handler(ready, i == 0))
             for i in range(3)]
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
