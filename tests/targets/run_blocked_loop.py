"""A `coroscope run` target: an event loop blocked inside a task's step.

Usage: run_blocked_loop.py READY_FILE [sleep|recv|poll|yields]

The task 'blocker' calls time.sleep() (or recv() on a socket nothing
writes to, or time.sleep(0.01) in a loop polling for a flag nothing
sets) inside its coroutine, or, with "yields", time.sleep(0.05) and then
`await asyncio.sleep(0)` in a loop (the loop turns between: not blocked), so its loop never runs again: a ticker,
a queue's consumer and producer, and main()'s gather all stay parked,
none of them the cause.  Writes READY_FILE just before blocking.

Runs on 3.6+.
"""
import asyncio
import os
import socket
import sys
import time


async def ticker():
    while True:
        await asyncio.sleep(0.05)


async def consumer(q):
    while True:
        await q.get()  # MARK: consumer


async def producer(q):
    while True:
        await asyncio.sleep(0.02)
        await q.put(1)


async def blocker(ready, how):
    await asyncio.sleep(0.3)
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    if how == "recv":
        a, b = socket.socketpair()
        a.recv(10)  # MARK: blocked-recv
    elif how == "poll":
        while not os.path.exists(ready + ".never"):
            time.sleep(0.01)  # MARK: blocked-poll
    elif how == "yields":
        while True:
            time.sleep(0.05)
            await asyncio.sleep(0)
    else:
        time.sleep(3600)  # MARK: blocked-sleep


async def main(ready, how):
    q = asyncio.Queue()
    tasks = [asyncio.ensure_future(c) for c in
             (ticker(), consumer(q), producer(q), blocker(ready, how))]
    if hasattr(tasks[-1], "set_name"):
        tasks[-1].set_name("blocker")
    await asyncio.gather(*tasks)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2
                             else "sleep"))
