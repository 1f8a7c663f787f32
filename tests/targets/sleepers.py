"""Tasks asleep in asyncio.sleep(): three alike on the main loop, due an
hour and a second apart; one on a second loop (another thread) whose
time() is a clock of its own, two hours ahead of time.monotonic(); and
one on a third loop for a tenth of a second, a loop that another of its
tasks then blocks in time.sleep() (3.11+: inside asyncio.timeout()),
so that the timer is past due; and one on a fourth loop whose timer
the loop has taken off its heap to run, behind a callback due just
before it that blocks (time.sleep()): past due too, in _ready.  Each
sleeper records when it is due by its loop's clock just before it
sleeps.  One more task awaits an Event, a future no timer completes.
And timeouts: a task in asyncio.wait_for() of an Event for 900 s, and
(3.11+) one asleep for an hour inside asyncio.timeout(1800).

Usage: sleepers.py READY_FILE [uvloop|hidden]     (CPython 3.6+)
With uvloop, the main loop is uvloop's (Debian's python3-uvloop), whose
timers live in C; with hidden, one of asyncio's whose _scheduled is a
property, no list, and whose call_later() hands out a wrapper (a loop
whose timers coroscope cannot read, but its Timeouts').  Writes
READY_FILE (JSON: pid, "due": each timer -> its loop's time when
it is due) once all of them wait and the short one is past due.
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


async def waiting_for(event):
    due["wait_for"] = asyncio.get_event_loop().time() + 900.0
    await asyncio.wait_for(event.wait(), 900.0)  # MARK: wait-for


async def timed_napper():
    now = asyncio.get_event_loop().time()
    async with asyncio.timeout(1800.0):
        due["timed-timeout"] = now + 1800.0
        due["timed-sleep"] = asyncio.get_event_loop().time() + DELAY
        await asyncio.sleep(DELAY)  # MARK: timed-nap


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
    if hasattr(asyncio, "timeout"):  # one that runs under a timeout
        async with asyncio.timeout(7200.0):
            time.sleep(3600)  # MARK: block-timed
    time.sleep(3600)  # MARK: block


async def ready_napper():
    loop = asyncio.get_event_loop()
    now = loop.time()
    due["ready"] = now + 0.1
    # both timers are due when the loop next looks (after the 0.3 s
    # callback): the blocking one first, the sleep's then waits in
    # _ready behind it
    loop.call_at(now + 0.1 - 1e-6, time.sleep, 3600)
    loop.call_soon(time.sleep, 0.3)
    await asyncio.sleep(0.1)  # MARK: ready-nap


def ready_blocked():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(ready_napper())


def blocked():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(asyncio.gather(short_napper(), blocker()))


async def main():
    event = asyncio.Event()
    tasks = [asyncio.ensure_future(napper("napper-%d" % i, DELAY + i))
             for i in range(3)]
    tasks.append(asyncio.ensure_future(listener(event)))
    tasks.append(asyncio.ensure_future(waiting_for(asyncio.Event())))
    timed = hasattr(asyncio, "timeout")
    if timed:
        tasks.append(asyncio.ensure_future(timed_napper()))
    threading.Thread(target=side, name="side", daemon=True).start()
    threading.Thread(target=blocked, name="blocked", daemon=True).start()
    threading.Thread(target=ready_blocked, name="ready-blocked",
                     daemon=True).start()
    while len(due) < 7 + 2 * timed or \
            time.monotonic() < max(due["short"], due["ready"]) + 0.5:
        await asyncio.sleep(0.01)
    write_ready(sys.argv[1], {"pid": os.getpid(), "due": dict(due)})
    await asyncio.gather(*tasks)


class OpaqueHandle(object):
    """What call_later() gives asyncio.sleep() on the hidden loop: no
    handle coroscope knows."""

    def __init__(self, handle):
        self.inner = handle

    def cancel(self):
        self.inner.cancel()


class HiddenTimersLoop(asyncio.SelectorEventLoop):
    _scheduled = property(lambda self: self._hidden,
                          lambda self, value: setattr(self, "_hidden", value))

    def call_later(self, *args, **kwargs):
        return OpaqueHandle(super().call_later(*args, **kwargs))


if sys.argv[2:] == ["uvloop"]:
    import uvloop
    loop = uvloop.new_event_loop()
elif sys.argv[2:] == ["hidden"]:
    loop = HiddenTimersLoop()
else:
    loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main())
