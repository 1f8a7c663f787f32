"""main() gathering a ticker that makes progress and a task parked on an
Event nothing sets; "parked" mode: two parked tasks only.

Usage: gathers_workers.py READY_FILE [parked].  Runs on 3.6+.

READY_FILE gets the pid and id() of the main task, as JSON.
"""

import asyncio
import os
import sys

from _ready import write_ready


async def ticker():
    n = 0
    while True:
        n += 1
        await asyncio.sleep(0.1)  # MARK: tick


async def parked(ev):
    await ev.wait()  # MARK: parked


async def main(ready, only_parked):
    ev = asyncio.Event()
    kids = [parked(ev), parked(ev) if only_parked else ticker()]
    me = asyncio.Task.current_task() if hasattr(asyncio.Task,
                                                "current_task") \
        else asyncio.current_task()
    write_ready(ready, {"pid": os.getpid(), "main": id(me)})
    await asyncio.gather(*kids)  # MARK: gather


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1], sys.argv[2:] == ["parked"]))
