"""A `coroscope run` target: a task parked on a future nothing will set,
with a parent task awaiting it, and a sleeper that will wake on its own.

Usage: run_stuck_task.py READY_FILE [EVENTS [gather|read|timeout]]

With EVENTS, as many more tasks each wait on an asyncio.Event of their
own, the k-th awaited by k + 2 parents: each holds up more tasks than the
leaf, so they rank before it, but the wait-for graph explains them.
With gather, the leaf awaits asyncio.gather() of its future instead: a
wait the graph records but does not explain.  With read, it awaits a
read from a stream whose other end never writes: parked in asyncio's
streams.py, below its own line.  With timeout, it awaits its future
under asyncio.wait_for() with a timeout of TIMEOUT seconds: stuck until
then; READY_FILE then holds the loop's time the wait ends at.  Three
alike tasks beside it wait so for TIMEOUT + 1, + 2 and + 3 seconds.

Runs on 3.6+; writes READY_FILE once everything is parked.
"""
import asyncio
import os
import socket
import sys

TIMEOUT = 600


async def stuck_leaf(never, how):
    if how == "gather":
        await asyncio.gather(never)  # MARK: stuck-gather
    elif how == "read":
        mine, theirs = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=mine)
        await reader.read(100)  # MARK: stuck-read
        theirs.close()
    elif how == "timeout":
        await asyncio.wait_for(never, TIMEOUT)  # MARK: stuck-timeout
    else:
        await never  # MARK: stuck-leaf


async def stuck_parent(child):
    await child  # MARK: stuck-parent


async def alike_timeout(seconds):
    never = asyncio.get_event_loop().create_future()
    await asyncio.wait_for(never, seconds)  # MARK: alike-timeout


async def on_event(event):
    await event.wait()  # MARK: on-event


async def napper():
    await asyncio.sleep(3600)


async def main(ready, events, how):
    loop = asyncio.get_event_loop()
    never = loop.create_future()
    leaf = asyncio.ensure_future(stuck_leaf(never, how))
    parent = asyncio.ensure_future(stuck_parent(leaf))
    for k in range(events):
        waiter = asyncio.ensure_future(on_event(asyncio.Event()))
        for _ in range(k + 3):
            asyncio.ensure_future(stuck_parent(waiter))
    nap = asyncio.ensure_future(napper())
    named = [(leaf, "stuck_leaf"), (parent, "stuck_parent"), (nap, "napper")]
    if how == "timeout":
        named += [(asyncio.ensure_future(alike_timeout(TIMEOUT + k)),
                   "alike-%d" % k) for k in (1, 2, 3)]
    for task, name in named:
        if hasattr(task, "set_name"):
            task.set_name(name)
    ends = loop.time() + TIMEOUT
    await asyncio.sleep(0.2)
    with open(ready + ".tmp", "w") as f:
        f.write(str(ends) if how == "timeout" else str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    await parent


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0,
         sys.argv[3] if len(sys.argv) > 3 else None))
