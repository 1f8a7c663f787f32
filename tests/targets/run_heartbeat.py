"""A `coroscope run` target: a heartbeat that only looks stuck.

Usage: run_heartbeat.py READY_FILE HOW

The main thread's asyncio loop has two tasks and nothing else to do:
  heartbeat  loops on a wait bounded by 0.3 s, always at one line: HOW
             "wait_for" awaits asyncio.wait_for(event.wait(), 0.3)
             (timing out each time), "sleep" asyncio.sleep(0.3)
  parked     awaits an Event that is never set (stuck)
Each beat is one wake of the loop's thread in a sampling window of
~0.2 s, which the samples cannot tell from the wake their own stop
causes, and the allocator often hands the new futures the old ones'
addresses: the task looks the same at every sample.

Writes READY_FILE (JSON: pid) once both run.  Runs on CPython 3.6+.
"""

import asyncio
import json
import os
import sys


async def heartbeat(event, how):
    beats = 0
    while True:
        if how == "wait_for":
            try:
                await asyncio.wait_for(event.wait(), 0.3)  # MARK: beat-wait-for
            except asyncio.TimeoutError:
                beats += 1
        else:
            await asyncio.sleep(0.3)  # MARK: beat-sleep
            beats += 1


async def parked(event):
    await event.wait()  # MARK: parked


async def main(ready, how):
    never, beat = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.ensure_future(heartbeat(beat, how)),
             asyncio.ensure_future(parked(never))]
    for task, name in zip(tasks, ("heartbeat", "parked")):
        if hasattr(task, "set_name"):
            task.set_name(name)
    await asyncio.sleep(0.1)
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(ready + ".tmp", ready)
    await tasks[1]


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1], sys.argv[2]))
