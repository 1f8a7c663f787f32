"""Generators of contextlib's generator-based context managers kept
entered by `with` blocks: of a thread, of a generator's own `with` in
turn, of an asyncio task (`async with`, 3.7+); and one entered by hand,
which no `with` holds.

Usage: cm_entered.py READY

Thread "holder" sits in `with outer_cm():`, whose generator sits in
`with inner_cm():`.  Thread "looper" runs a loop whose task sits in
`async with async_cm():`.  by_hand()'s generator was entered by calling
__enter__().  Once all are in place, READY gets the pid, the address of
by_hand()'s generator and the holder's native tid.
Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import contextlib
import os
import sys
import threading
import time

from _ready import write_ready


@contextlib.contextmanager
def inner_cm():
    yield  # MARK: inner-yield


@contextlib.contextmanager
def outer_cm():
    with inner_cm():  # MARK: nested-with
        yield  # MARK: outer-yield


@contextlib.contextmanager
def by_hand():
    yield  # MARK: by-hand-yield


def holder(entered):
    with outer_cm():  # MARK: thread-with
        entered.set()
        threading.Event().wait()  # MARK: thread-waits


if hasattr(contextlib, "asynccontextmanager"):
    @contextlib.asynccontextmanager
    async def async_cm():
        yield  # MARK: async-yield
else:
    async_cm = None


async def task_holds(entered):
    async with async_cm():  # MARK: task-with
        entered.set()
        await asyncio.Event().wait()  # MARK: task-waits


def looper(entered):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(task_holds(entered))


def main(path):
    kept = by_hand()
    kept.__enter__()
    waits = [threading.Event()]
    threading.Thread(target=holder, args=(waits[0],), name="holder",
                     daemon=True).start()
    if async_cm is not None:
        waits.append(threading.Event())
        threading.Thread(target=looper, args=(waits[1],), name="looper",
                         daemon=True).start()
    for e in waits:
        e.wait()
    time.sleep(0.2)
    write_ready(path, {"pid": os.getpid(), "by_hand": id(kept.gen),
                       "async": async_cm is not None})
    time.sleep(3600)  # MARK: main-sleeps


if __name__ == "__main__":
    main(sys.argv[1])
