"""anyio's deadlines on its asyncio backend: what coroscope says of when
each wait ends.

Usage: anyio_deadlines.py READY_FILE [asyncio|uvloop]

Under anyio.run(backend="asyncio"), with uvloop's loop too, in one task
group:
- "waiter" on an anyio.Event inside fail_after(600);
- "nested" on an anyio.Lock inside move_on_after(800) inside
  move_on_after(900): the first to come, 800;
- "shielded" on the Event inside a shielded CancelScope inside
  move_on_after(500): no timeout;
- "child-N" (two), started by "opener" in a task group it opened inside
  move_on_after(700), each waiting on the Event: the group's scope lies
  inside that one, so each times out at 700;
- "holder" holds the Lock, waiting on the Event (no deadline).

READY_FILE gets, as JSON, "due": the loop's time (anyio.current_time(),
the loop's time(): time.monotonic() on asyncio's loop, libuv's
monotonic clock to the millisecond on uvloop's) each deadline is due
at, taken a moment before the scope is made; and "pid".
"""

import os
import sys

import anyio

from _ready import write_ready

LOOP = sys.argv[2] if len(sys.argv) > 2 else "asyncio"


def due(record, name, seconds):
    record[name] = anyio.current_time() + seconds


async def waiter(record, never):
    due(record, "waiter", 600)
    with anyio.fail_after(600):
        await never.wait()  # MARK: anyio-waiter


async def nested(record, lock):
    with anyio.move_on_after(900):
        due(record, "nested", 800)
        with anyio.move_on_after(800):
            await lock.acquire()  # MARK: anyio-nested


async def shielded(never):
    with anyio.move_on_after(500):
        with anyio.CancelScope(shield=True):
            await never.wait()  # MARK: anyio-shielded


async def child(never):
    await never.wait()  # MARK: anyio-child


async def opener(record, never):
    due(record, "opener", 700)
    with anyio.move_on_after(700):
        async with anyio.create_task_group() as tg:
            for k in range(2):
                tg.start_soon(child, never, name="child-%d" % k)


async def holder(lock, never):
    async with lock:
        await never.wait()  # MARK: anyio-holder


async def main(ready):
    record = {}
    never = anyio.Event()
    lock = anyio.Lock()
    async with anyio.create_task_group() as tg:
        tg.start_soon(holder, lock, never, name="holder")
        await anyio.sleep(0.05)
        tg.start_soon(waiter, record, never, name="waiter")
        tg.start_soon(nested, record, lock, name="nested")
        tg.start_soon(shielded, never, name="shielded")
        tg.start_soon(opener, record, never, name="opener")
        await anyio.sleep(0.2)
        write_ready(ready, {"pid": os.getpid(), "due": record})
        await never.wait()


anyio.run(main, sys.argv[1], backend="asyncio",
          backend_options={"use_uvloop": LOOP == "uvloop"})
