"""trio tasks parked under deadlines: what coroscope says of when each
wakes or gives up.

Usage: trio_deadlines.py READY_FILE [trio|anyio|mock]

In one nursery:
- "napper" in trio.sleep(3600);
- "waiter" on a trio.Event inside move_on_after(600);
- "nested" on a trio.Lock's acquire inside fail_after(800) inside
  move_on_after(900): the first to come, 800;
- "shielded" on an Event inside a shielded CancelScope inside
  move_on_after(500): the shield keeps that deadline off, no timeout;
- "sleeper-under" in trio.sleep(3600) inside move_on_after(300): it
  wakes in an hour, but its timeout comes first;
- "forever-under" in trio.sleep_forever() inside move_on_after(700):
  at the bottom of the waits, a stuck task whose timeout will end it;
- "holder" holds the Lock, parked forever (no deadline);
- "thread-job" in to_thread.run_sync() of a thread that waits for ever,
  inside move_on_after(400): the job cannot be abandoned (trio's
  default), so the deadline cannot end the wait: no timeout;
- "abandonable-job" the same with cancellable=True (abandon_on_cancel
  since trio 0.23) inside move_on_after(450): its timeout, 450.

With anyio, the deadlines are anyio's move_on_after() and fail_after()
on its trio backend, the sleeps anyio.sleep().  With mock, trio runs on
trio.testing.MockClock (a clock of its own, at 0 when the run starts,
which only moves when told): its times are its own.

READY_FILE gets, as JSON: "due", for each of those tasks the time each
of its timers is due at ("napper", "waiter", ...; "sleeper-under-wake"
for that one's sleep), taken a moment before the timer: time.monotonic()
plus its seconds, or with mock the run's own time; but with anyio, the
address of "waiter"'s CancelScope ("waiter-scope"); and "pid".
"""

import inspect
import os
import sys
import threading
import time

import trio
import trio.testing

from _ready import write_ready

HOW = sys.argv[2] if len(sys.argv) > 2 else "trio"
if HOW == "anyio":
    import anyio
    move_on_after, fail_after, sleep = (anyio.move_on_after,
                                        anyio.fail_after, anyio.sleep)
else:
    move_on_after, fail_after, sleep = (trio.move_on_after,
                                        trio.fail_after, trio.sleep)


def due(record, name, seconds):
    """The time a timer set now for seconds is due at, on the clock the
    test compares it with."""
    now = trio.current_time() if HOW == "mock" else time.monotonic()
    record[name] = now + seconds


async def napper(record):
    due(record, "napper", 3600)
    await sleep(3600)  # MARK: trio-napper


async def waiter(record, never):
    due(record, "waiter", 600)
    with move_on_after(600) as scope:
        if HOW != "anyio":   # (anyio's wraps trio's)
            record["waiter-scope"] = hex(id(scope))
        await never.wait()  # MARK: trio-waiter


async def nested(record, lock):
    due(record, "nested", 800)
    with move_on_after(900):
        with fail_after(800):
            await lock.acquire()  # MARK: trio-nested


async def shielded(never):
    with move_on_after(500):
        with trio.CancelScope(shield=True):
            await never.wait()  # MARK: trio-shielded


async def sleeper_under(record):
    due(record, "sleeper-under", 300)
    with move_on_after(300):
        due(record, "sleeper-under-wake", 3600)
        await sleep(3600)  # MARK: trio-sleeper-under


async def forever_under(record):
    due(record, "forever-under", 700)
    with move_on_after(700):
        await trio.sleep_forever()  # MARK: trio-forever-under


STOP = threading.Event()
if HOW == "anyio":
    to_thread, ABANDON = anyio.to_thread.run_sync, "cancellable"
else:
    to_thread = trio.to_thread.run_sync
    ABANDON = ("abandon_on_cancel" if "abandon_on_cancel" in
               inspect.signature(to_thread).parameters else "cancellable")


async def thread_job():
    with move_on_after(400):
        await to_thread(STOP.wait)  # MARK: trio-thread-job


async def abandonable_job(record):
    due(record, "abandonable-job", 450)
    with move_on_after(450):
        await to_thread(STOP.wait, **{ABANDON: True})  # MARK: trio-abandonable


async def holder(lock, never):
    async with lock:
        await never.wait()  # MARK: trio-holder


async def main(ready):
    record = {}
    never = trio.Event()
    lock = trio.Lock()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder, lock, never, name="holder")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(napper, record, name="napper")
        nursery.start_soon(waiter, record, never, name="waiter")
        nursery.start_soon(nested, record, lock, name="nested")
        nursery.start_soon(shielded, never, name="shielded")
        nursery.start_soon(sleeper_under, record, name="sleeper-under")
        nursery.start_soon(forever_under, record, name="forever-under")
        nursery.start_soon(thread_job, name="thread-job")
        nursery.start_soon(abandonable_job, record, name="abandonable-job")
        await trio.testing.wait_all_tasks_blocked()
        scope = record.pop("waiter-scope", None)
        write_ready(ready, {"pid": os.getpid(), "due": record,
                            "waiter-scope": scope})
        await trio.sleep_forever()


if HOW == "mock":
    trio.run(main, sys.argv[1], clock=trio.testing.MockClock())
else:
    trio.run(main, sys.argv[1])
