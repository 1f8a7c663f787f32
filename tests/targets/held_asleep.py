"""A lock held by a task asleep inside its `async with`, and tasks waiting
for it under timeouts: what `run` and `dump` say of how long the lock
stays held and when each wait ends.

Usage: held_asleep.py READY_FILE

- "holder" takes an asyncio.Lock and sleeps an hour inside the block;
- "patient" waits for it under asyncio.wait_for(lock.acquire(), 600)
  (up to 3.11 wait_for() wraps the acquire in a task of its own, which
  is the lock's waiter; from 3.12 "patient" waits itself, under a
  Timeout);
- "impatient-1" .. "-3" wait alike, for 601, 602 and 603 seconds.

READY_FILE gets, as JSON, the loop's time (time.monotonic()) each timer
is due at, recorded a moment before the timer is made: "wakes" for the
holder's sleep, "patient" and "impatient-K" for the timeouts.
Runs on 3.6+.
"""
import asyncio
import json
import os
import sys

NAP = 3600
TIMEOUT = 600


async def hold(lock, due):
    async with lock:  # MARK: held-take
        due["wakes"] = asyncio.get_event_loop().time() + NAP
        await asyncio.sleep(NAP)  # MARK: held-sleep


async def patient(lock, due):
    due["patient"] = asyncio.get_event_loop().time() + TIMEOUT
    await asyncio.wait_for(lock.acquire(), TIMEOUT)  # MARK: patient-wait


async def impatient(lock, due, k):
    due["impatient-%d" % k] = asyncio.get_event_loop().time() + TIMEOUT + k
    await asyncio.wait_for(lock.acquire(), TIMEOUT + k)  # MARK: alike-wait


def named(task, name):
    if hasattr(task, "set_name"):
        task.set_name(name)
    return task


async def main(ready):
    lock = asyncio.Lock()
    due = {}
    tasks = [named(asyncio.ensure_future(hold(lock, due)), "holder")]
    await asyncio.sleep(0.1)
    tasks.append(named(asyncio.ensure_future(patient(lock, due)),
                       "patient"))
    for k in (1, 2, 3):
        tasks.append(named(asyncio.ensure_future(impatient(lock, due, k)),
                           "impatient-%d" % k))
    await asyncio.sleep(0.2)
    with open(ready + ".tmp", "w") as f:
        json.dump(due, f)
    os.rename(ready + ".tmp", ready)
    await asyncio.gather(*tasks)


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
