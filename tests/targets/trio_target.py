"""A target for coroscope's trio tests: a nursery of trio tasks parked on
events and sleeps, one of them with a nursery of its own.

Usage: trio_target.py READY_FILE [trio|anyio|anyio-asyncio]

With "anyio" the same tree is built through anyio's task groups on its
trio backend (start_soon(..., name=...)); with "anyio-asyncio" through
anyio on its asyncio backend, where the tasks are asyncio tasks carrying
anyio's names.  Once everything is parked a
reporter task records what trio itself knows of every task -- name,
parent task (through its nursery), and its coroutine chain (function and
line, outermost first, following cr_await / gi_yieldfrom) -- writes it
to READY_FILE as JSON (atomically) and returns.

Needs trio (and anyio): Debian's python3-trio / python3-anyio on
/usr/bin/python3.11.
"""

import json
import os
import sys

import trio


def chain_of(coro):
    """The await chain as the process sees it, outermost first."""
    out = []
    obj = coro
    while obj is not None and len(out) < 100:
        code = getattr(obj, "cr_code", None) or getattr(obj, "gi_code", None)
        frame = getattr(obj, "cr_frame", None) or getattr(obj, "gi_frame",
                                                           None)
        if code is None or frame is None:
            break
        out.append({"function": code.co_name, "line": frame.f_lineno})
        nxt = getattr(obj, "cr_await", None)
        if nxt is None:
            nxt = getattr(obj, "gi_yieldfrom", None)
        obj = nxt
    return out


def all_tasks():
    todo = [trio.lowlevel.current_root_task()]
    seen = []
    while todo and len(seen) < 1000:
        t = todo.pop()
        seen.append(t)
        for n in t.child_nurseries:
            todo.extend(n.child_tasks)
    return seen


async def wait_event(ev):
    await ev.wait()  # MARK: trio-event


async def nap():
    await trio.sleep(3600)  # MARK: trio-sleep


async def grandchild():
    await trio.sleep(3600)  # MARK: trio-grandchild


async def supervisor_trio():
    async with trio.open_nursery() as inner:  # MARK: trio-inner-nursery
        inner.start_soon(grandchild, name="grandchild-0")
        inner.start_soon(grandchild, name="grandchild-1")


async def supervisor_anyio():
    import anyio
    async with anyio.create_task_group() as inner:  # MARK: anyio-inner
        inner.start_soon(grandchild, name="grandchild-0")
        inner.start_soon(grandchild, name="grandchild-1")


async def reporter(ready):
    await trio.sleep(0.3)  # every other task is parked by now
    me = trio.lowlevel.current_task()
    record = {"pid": os.getpid(), "tasks": []}
    for t in all_tasks():
        if t is me:
            continue
        parent = t.parent_nursery.parent_task if t.parent_nursery else None
        record["tasks"].append({"id": id(t), "name": t.name,
                                "parent": id(parent) if parent else None,
                                "chain": chain_of(t.coro)})
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)


async def main_trio(ready):
    ev = trio.Event()
    async with trio.open_nursery() as nursery:  # MARK: trio-nursery
        nursery.start_soon(wait_event, ev, name="event-waiter")
        nursery.start_soon(nap, name="napper")
        nursery.start_soon(supervisor_trio, name="supervisor")
        nursery.start_soon(reporter, ready)


async def main_anyio(ready):
    import anyio
    ev = anyio.Event()
    async with anyio.create_task_group() as tg:  # MARK: anyio-nursery
        tg.start_soon(wait_event, ev, name="event-waiter")
        tg.start_soon(nap, name="napper")
        tg.start_soon(supervisor_anyio, name="supervisor")
        tg.start_soon(reporter, ready)


async def any_nap():
    import anyio
    await anyio.sleep(3600)  # MARK: anyio-sleep


async def any_wait(ev):
    await ev.wait()  # MARK: anyio-event


async def any_supervisor():
    import anyio
    async with anyio.create_task_group() as inner:
        inner.start_soon(any_nap, name="grandchild-0")
        inner.start_soon(any_nap, name="grandchild-1")


async def any_reporter(ready):
    import anyio
    import asyncio
    await anyio.sleep(0.3)
    me = asyncio.current_task()
    record = {"pid": os.getpid(), "tasks": []}
    for t in asyncio.all_tasks():
        if t is not me:
            record["tasks"].append({"id": id(t), "name": t.get_name(),
                                    "chain": chain_of(t.get_coro())})
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)


async def main_anyio_asyncio(ready):
    import anyio
    ev = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(any_wait, ev, name="event-waiter")
        tg.start_soon(any_nap, name="napper")
        tg.start_soon(any_supervisor, name="supervisor")
        tg.start_soon(any_reporter, ready)


if __name__ == "__main__":
    if sys.argv[2:] == ["anyio-asyncio"]:
        import anyio
        anyio.run(main_anyio_asyncio, sys.argv[1], backend="asyncio")
    elif sys.argv[2:] == ["anyio"]:
        import anyio
        anyio.run(main_anyio, sys.argv[1], backend="trio")
    else:
        trio.run(main_trio, sys.argv[1])
