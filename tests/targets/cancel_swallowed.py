"""A task that swallows its cancellation, and main() awaiting it after
cancelling it: the await never returns.

Usage: cancel_swallowed.py [READY_FILE|-] [MODE]

MODE "parked" (the default): the task waits on an Event nobody sets, in
a loop, and
catches the CancelledError there; "loop": it sleeps 0.1 s in a loop,
catching it, so it moves all along; "group" (3.11+): it is a TaskGroup's
child, cancelled by the group when a sibling fails, and its parent waits
in the group's exit; "anyio": the same in an anyio task group on
asyncio, whose scope, cancelled, cancels it again at each turn of the
loop (it runs most of the time, a little work at each catch).

READY_FILE gets, as JSON, once the task caught the CancelledError:
"pid", "task": the stubborn task's id() and its cancelling() (3.11+;
null before), "other": main's task's id() and its cancelling().
"""
import asyncio
import json
import os
import sys

caught = never = None  # (made in the loop: 3.6-3.9 bind them then)
MODE = sys.argv[2] if len(sys.argv) > 2 else "parked"


async def stubborn_worker():
    while True:
        try:
            if MODE == "loop":
                await asyncio.sleep(0.1)  # MARK: swallowed-loop
            else:
                await never.wait()  # MARK: swallowed
        except asyncio.CancelledError:
            caught.set()               # BUG: swallows cancellation
            if MODE == "anyio":
                sum(range(20000))  # MARK: catch-work


async def failing():
    await caught.wait()
    raise ValueError("sibling failed")


def cancelling(task):
    return task.cancelling() if hasattr(task, "cancelling") else None


def write_ready(t, me):
    if len(sys.argv) < 2 or sys.argv[1] == "-":
        return
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(),
                   "task": {"id": id(t), "cancelling": cancelling(t)},
                   "other": {"id": id(me), "cancelling": cancelling(me)}},
                  f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])


async def in_group():
    async with asyncio.TaskGroup() as tg:  # MARK: group
        tg.create_task(stubborn_worker(), name="stubborn")
        tg.create_task(failing())
        caught.set()


async def in_anyio_group():
    import anyio

    async with anyio.create_task_group() as tg:  # MARK: anyio-group
        tg.start_soon(stubborn_worker, name="stubborn")
        await anyio.sleep(0.05)
        tg.cancel_scope.cancel()


async def main():
    global caught, never
    caught, never = asyncio.Event(), asyncio.Event()
    if MODE == "anyio":
        await in_anyio_group()
        return
    if MODE == "group":
        await in_group()
        return
    t = asyncio.ensure_future(stubborn_worker())
    if hasattr(t, "set_name"):
        t.set_name("stubborn")
    await asyncio.sleep(0.05)
    t.cancel()
    await caught.wait()
    me = asyncio.current_task() if hasattr(asyncio, "current_task") \
        else asyncio.Task.current_task()
    write_ready(t, me)
    await t  # MARK: awaits-stubborn


loop = asyncio.new_event_loop()
loop.run_until_complete(main())
