"""Locks held through generator-based context managers: the `with` that
holds each lock is open in a generator suspended at its yield, which no
stack runs; the holder's own `with` holds the manager.

Usage: cm_holders.py READY_FILE

- thread "cm-holder" enters `with held(tlock):` (@contextmanager) and
  sleeps; thread "cm-waiter" blocks acquiring tlock.
- (3.7+) task "acm-holder" enters `async with aheld(alock):`
  (@asynccontextmanager) and waits on an Event; task "acm-waiter" waits
  for alock.  Also held two managers deep: task "acm-nested" holds
  alock2 through nested(), which enters aheld(alock2); "acm-waiter2"
  waits for alock2.
Writes READY_FILE (JSON: pid, tids by name) once all wait.  Runs on
CPython 3.6+ (the asyncio part from 3.7).
"""

import asyncio
import contextlib
import json
import os
import sys
import threading
import time

_tids = {}


def native_id():
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])


@contextlib.contextmanager
def held(lock):
    with lock:
        yield  # MARK: cm-yield


def cm_holder(tlock, entered):
    _tids["cm-holder"] = native_id()
    with held(tlock):
        entered.set()
        time.sleep(3600)


def cm_waiter(tlock):
    _tids["cm-waiter"] = native_id()
    with tlock:
        pass


if sys.version_info >= (3, 7):
    @contextlib.asynccontextmanager
    async def aheld(lock):
        async with lock:
            yield  # MARK: acm-yield

    @contextlib.asynccontextmanager
    async def nested(lock):
        async with aheld(lock):
            yield

    async def acm_holder(lock, event):
        async with aheld(lock):
            await event.wait()

    async def acm_nested(lock, event):
        async with nested(lock):
            await event.wait()

    async def acm_waiter(lock):
        async with lock:
            pass


async def main(ready):
    tlock, entered = threading.Lock(), threading.Event()
    threading.Thread(target=cm_holder, args=(tlock, entered),
                     name="cm-holder", daemon=True).start()
    entered.wait()
    threading.Thread(target=cm_waiter, args=(tlock,), name="cm-waiter",
                     daemon=True).start()
    if sys.version_info >= (3, 7):
        alock, alock2, never = asyncio.Lock(), asyncio.Lock(), asyncio.Event()
        for coro, name in ((acm_holder(alock, never), "acm-holder"),
                           (acm_nested(alock2, never), "acm-nested")):
            asyncio.ensure_future(coro).set_name(name) \
                if sys.version_info >= (3, 8) else asyncio.ensure_future(coro)
        await asyncio.sleep(0.1)
        for coro, name in ((acm_waiter(alock), "acm-waiter"),
                           (acm_waiter(alock2), "acm-waiter2")):
            task = asyncio.ensure_future(coro)
            if hasattr(task, "set_name"):
                task.set_name(name)
    await asyncio.sleep(0.3)
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "tids": _tids}, f)
    os.rename(ready + ".tmp", ready)
    await asyncio.sleep(3600)


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
