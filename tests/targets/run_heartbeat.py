"""A `coroscope run` target: a heartbeat that only looks stuck.

Usage: run_heartbeat.py READY_FILE HOW

The main thread's asyncio loop has two tasks and nothing else to do:
  heartbeat  loops on a wait bounded by 0.3 s, always at one line: HOW
             "wait_for" awaits asyncio.wait_for(event.wait(), 0.3)
             (timing out each time), "sleep" asyncio.sleep(0.3)
  parked     awaits an Event that is never set (stuck)
Two more HOWs where the heartbeat (on wait_for) can never wake, stuck:
"spin" adds a task "blocker" that spins in its step for good, on the
loop's thread; "stopped" leaves the heartbeat on a loop that stopped,
while another loop runs on that thread, its task "napper" looping on
asyncio.sleep(0.05).  A HOW prefixed "uvloop-" runs the same on uvloop's
loop (Debian's python3-uvloop), in C: no selector's frame.
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
        if how != "sleep":
            try:
                await asyncio.wait_for(event.wait(), 0.3)  # MARK: beat-wait-for
            except asyncio.TimeoutError:
                beats += 1
        else:
            await asyncio.sleep(0.3)  # MARK: beat-sleep
            beats += 1


async def parked(event):
    await event.wait()  # MARK: parked


async def blocker():
    await asyncio.sleep(0.5)
    while True:  # MARK: spin
        pass


async def napper(ready):
    announce(ready)
    while True:
        await asyncio.sleep(0.05)


def announce(ready):
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(ready + ".tmp", ready)


async def main(ready, how):
    never, beat = asyncio.Event(), asyncio.Event()
    tasks = [asyncio.ensure_future(heartbeat(beat, how)),
             asyncio.ensure_future(parked(never))]
    if how == "spin":
        tasks.append(asyncio.ensure_future(blocker()))
    for task, name in zip(tasks, ("heartbeat", "parked", "blocker")):
        if hasattr(task, "set_name"):
            task.set_name(name)
    await asyncio.sleep(0.1)
    if how == "stopped":
        return
    announce(ready)
    await tasks[1]


if sys.argv[2].startswith("uvloop-"):
    import uvloop
    uvloop.install()
    sys.argv[2] = sys.argv[2][len("uvloop-"):]
# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1], sys.argv[2]))
if sys.argv[2] == "stopped":
    # the first loop's tasks stay on it, pending, never run again
    second = asyncio.new_event_loop()
    asyncio.set_event_loop(second)
    nap = second.create_task(napper(sys.argv[1]))
    if hasattr(nap, "set_name"):
        nap.set_name("napper")
    second.run_until_complete(nap)
