"""A target for a trio.Lock handed over to a task that has not run since.

Usage: trio_handover.py READY_FILE

"giver" takes a trio.Lock, lets "taker" queue on it, releases it -- which
makes "taker" the lock's owner before it runs again -- and then blocks
the whole run in time.sleep(), so "taker" never gets to leave acquire().
Just before, READY_FILE gets the pid and what trio says of the lock (its
owner's name, the tasks waiting) as JSON, written atomically.

Needs trio: Debian's python3-trio on /usr/bin/python3.11.
"""

import os
import sys
import time

import trio

from _ready import write_ready


async def taker(lock):
    async with lock:  # MARK: handover-taker
        pass


async def giver(lock, ready):
    await lock.acquire()
    # Bounded: "taker" queues on it at its first turn.
    for _ in range(1000):
        if lock.statistics().tasks_waiting:
            break
        await trio.sleep(0.01)
    lock.release()                 # "taker" owns it now
    stats = lock.statistics()
    write_ready(ready, {"pid": os.getpid(), "owner": stats.owner.name,
                        "locked": stats.locked,
                        "waiting": stats.tasks_waiting})
    time.sleep(3600)  # MARK: handover-giver


async def main(ready):
    lock = trio.Lock()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(giver, lock, ready, name="giver")
        await trio.sleep(0.02)
        nursery.start_soon(taker, lock, name="taker")


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
