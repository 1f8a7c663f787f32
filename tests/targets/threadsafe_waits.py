"""Futures of asyncio.run_coroutine_threadsafe() whose coroutine no task
runs yet, waited for by a thread.

Usage: threadsafe_waits.py READY

The main thread's loop runs a coroutine that calls
run_coroutine_threadsafe() on that same loop and blocks in the
future's result(): the loop cannot start the coroutine while its own
thread waits for it (MARK: self-blocked).  Thread "looper" runs a second
loop whose task is stuck in time.sleep(), and thread "caller" waits for
a coroutine scheduled on that loop (MARK: caller-blocked).  Thread
"cb-looper" runs a third loop, with no task at all, stuck in a callback
that sleeps (MARK: cb-sleeps); thread "cb-caller" waits for a coroutine
scheduled on it (MARK: cb-caller-blocked).  Once both
wait, READY gets the pid and the threads' native ids.
Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import os
import sys
import threading
import time

from _ready import write_ready

started = {}


def native_id():
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])


async def compute():
    return 42


async def compute_for_caller():
    return 43


async def sleeps_in_step(ready):
    started["looper"] = native_id()
    ready.set()
    time.sleep(3600)  # MARK: looper-sleeps


def looper(loop, ready):
    asyncio.set_event_loop(loop)
    loop.run_until_complete(sleeps_in_step(ready))


def caller(loop, looping, calling):
    looping.wait()
    started["caller"] = native_id()
    fut = asyncio.run_coroutine_threadsafe(compute_for_caller(), loop)
    calling.set()
    fut.result()  # MARK: caller-blocked


async def blocks_its_loop(ready):
    fut = asyncio.run_coroutine_threadsafe(compute(),
                                           asyncio.get_event_loop())
    ready.set()
    return fut.result()  # MARK: self-blocked


def sleeping_callback(ready):
    started["cb-looper"] = native_id()
    ready.set()
    time.sleep(3600)  # MARK: cb-sleeps


def cb_looper(loop, ready):
    asyncio.set_event_loop(loop)
    loop.call_soon(sleeping_callback, ready)
    loop.run_forever()


async def compute_for_cb_caller():
    return 44


def cb_caller(loop, looping, calling):
    looping.wait()
    started["cb-caller"] = native_id()
    fut = asyncio.run_coroutine_threadsafe(compute_for_cb_caller(), loop)
    calling.set()
    fut.result()  # MARK: cb-caller-blocked


def announce(path, events):
    for e in events:
        e.wait()
    time.sleep(0.2)
    write_ready(path, {"pid": os.getpid(), "tids": started})


def main(path):
    other = asyncio.new_event_loop()
    looping, calling, blocked = (threading.Event() for _ in range(3))
    threading.Thread(target=looper, args=(other, looping), name="looper",
                     daemon=True).start()
    threading.Thread(target=caller, args=(other, looping, calling),
                     name="caller", daemon=True).start()
    cb_loop = asyncio.new_event_loop()
    cb_looping, cb_calling = threading.Event(), threading.Event()
    threading.Thread(target=cb_looper, args=(cb_loop, cb_looping),
                     name="cb-looper", daemon=True).start()
    threading.Thread(target=cb_caller,
                     args=(cb_loop, cb_looping, cb_calling),
                     name="cb-caller", daemon=True).start()
    threading.Thread(target=announce,
                     args=(path, (calling, blocked, cb_calling)),
                     daemon=True).start()
    started["main"] = native_id()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(blocks_its_loop(blocked))


if __name__ == "__main__":
    main(sys.argv[1])
