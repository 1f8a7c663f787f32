"""A `coroscope run` target: a task parked on a future nothing will set,
with a parent task awaiting it, and a sleeper that will wake on its own.

Runs on 3.6+; writes READY_FILE once everything is parked.
"""
import asyncio
import os
import sys


async def stuck_leaf(never):
    await never  # MARK: stuck-leaf


async def stuck_parent(child):
    await child  # MARK: stuck-parent


async def napper():
    await asyncio.sleep(3600)


async def main(ready):
    loop = asyncio.get_event_loop()
    never = loop.create_future()
    leaf = asyncio.ensure_future(stuck_leaf(never))
    parent = asyncio.ensure_future(stuck_parent(leaf))
    nap = asyncio.ensure_future(napper())
    for task, name in ((leaf, "stuck_leaf"), (parent, "stuck_parent"),
                       (nap, "napper")):
        if hasattr(task, "set_name"):
            task.set_name(name)
    await asyncio.sleep(0.2)
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    await parent


asyncio.get_event_loop().run_until_complete(main(sys.argv[1]))
