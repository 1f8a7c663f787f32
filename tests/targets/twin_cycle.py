"""Two tasks of one coroutine, with one name, awaiting each other (an
await cycle whose names say nothing apart), beside the main task.

Usage: twin_cycle.py READY_FILE

Before 3.8 a task's name is its coroutine's; from 3.8 both are named
"twin" too.  Writes READY_FILE (JSON: pid, the twins' addresses) once
they wait on each other.  Runs on CPython 3.6+.
"""

import asyncio
import json
import os
import sys

tasks = []


async def twin(other):
    while len(tasks) < 2:
        await asyncio.sleep(0.01)
    await tasks[other]  # MARK: twin-awaits


async def main(ready):
    loop = asyncio.get_event_loop()
    for other in (1, 0):
        tasks.append(loop.create_task(twin(other)))
        if hasattr(tasks[-1], "set_name"):
            tasks[-1].set_name("twin")
    await asyncio.sleep(0.2)
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "twins": [id(t) for t in tasks]}, f)
    os.rename(ready + ".tmp", ready)
    await asyncio.sleep(3600)


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
