"""Tasks asleep in asyncio.sleep(): three alike on the main loop, due an
hour and a second apart; one on a second loop (another thread) whose
time() is a clock of its own, two hours ahead of time.monotonic(); and
one on a third loop for a tenth of a second, a loop that another of its
tasks then blocks in time.sleep(), so that the timer is past due.  Each
sleeper records when it is due by its loop's clock just before it
sleeps.  One more task awaits an Event, a future no timer completes.

Usage: sleepers.py READY_FILE      (CPython 3.6+)
Writes READY_FILE (JSON: pid, "due": sleeper -> its loop's time when its
sleep ends) once all five sleep and the short one is past due.
"""

import asyncio
import os
import sys
import threading
import time

from _ready import write_ready

DELAY = 3600.0
due = {}


async def napper(name, delay):
    due[name] = asyncio.get_event_loop().time() + delay
    await asyncio.sleep(delay)  # MARK: nap


async def listener(event):
    await event.wait()  # MARK: listen


class OwnClockLoop(asyncio.SelectorEventLoop):
    def time(self):
        return super().time() + 7200.0


async def own_napper():
    due["own"] = asyncio.get_event_loop().time() + DELAY
    await asyncio.sleep(DELAY)  # MARK: own-nap


def side():
    loop = OwnClockLoop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(own_napper())


async def short_napper():
    due["short"] = asyncio.get_event_loop().time() + 0.1
    await asyncio.sleep(0.1)  # MARK: short-nap


async def blocker():
    await asyncio.sleep(0)  # the short one sleeps first
    time.sleep(3600)  # MARK: block


def blocked():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.gather(short_napper(), blocker()))


async def main():
    event = asyncio.Event()
    tasks = [asyncio.ensure_future(napper("napper-%d" % i, DELAY + i))
             for i in range(3)]
    tasks.append(asyncio.ensure_future(listener(event)))
    threading.Thread(target=side, name="side", daemon=True).start()
    threading.Thread(target=blocked, name="blocked", daemon=True).start()
    while len(due) < 5 or time.monotonic() < due["short"] + 0.2:
        await asyncio.sleep(0.01)
    write_ready(sys.argv[1], {"pid": os.getpid(), "due": dict(due)})
    await asyncio.gather(*tasks)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main())
