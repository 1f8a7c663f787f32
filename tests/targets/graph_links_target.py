"""Links of the wait-for graph across loops, threads and helpers
(tests/test_graph_links.py).

Usage: graph_links_target.py READY SCENARIO [PATH]

Scenarios:
  threadsafe    a plain thread blocks in run_coroutine_threadsafe(...).result()
                on a coroutine of a loop run by another thread, which
                waits on an Event; a task of a third loop awaits
                wrap_future() of another such future
  as_completed  a task iterates as_completed() over three children, one
                done, two parked on an Event
  gather        a task awaits a gather of three children, one done
  cfuture       a thread waits on a concurrent.futures.Future that no
                one completes
  tornado       two tasks each await a tornado gen.coroutine generator that
                is parked on a yielded future, through a second one (needs
                tornado; PATH, if given, is put first on sys.path to
                find it)

Writes {"pid": ...} to READY once everything waits, then waits forever.
Runs on CPython 3.6 through 3.14 (tornado where it can be imported).
"""

import asyncio
import concurrent.futures
import json
import os
import sys
import threading
import time

READY, SCENARIO = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    # (a tornado shared with another interpreter: leave its files alone)
    sys.dont_write_bytecode = True
    sys.path.insert(0, sys.argv[3])


def ready(**extra):
    extra["pid"] = os.getpid()
    with open(READY + ".tmp", "w") as f:
        json.dump(extra, f)
    os.rename(READY + ".tmp", READY)


def spawn(loop, coro, name):
    task = loop.create_task(coro)
    if hasattr(task, "set_name"):
        task.set_name(name)
    return task


def loop_thread(name):
    """A new loop run forever by a daemon thread called name."""
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run():
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()
    threading.Thread(target=run, name=name, daemon=True).start()
    started.wait()
    return loop


# ---- threadsafe -----------------------------------------------------------

async def remote_work(ev):
    await ev.wait()  # MARK: remote-work


async def local_waiter(cf):
    await asyncio.wrap_future(cf)  # MARK: local-waiter


def threadsafe():
    remote = loop_thread("remote-loop")
    ev = asyncio.run_coroutine_threadsafe(make_event(), remote).result()
    caller_started = threading.Event()

    def caller():
        cf = asyncio.run_coroutine_threadsafe(remote_work(ev), remote)
        caller_started.set()
        cf.result()  # MARK: caller-blocked
    threading.Thread(target=caller, name="caller", daemon=True).start()
    caller_started.wait()
    other = asyncio.run_coroutine_threadsafe(remote_work(ev), remote)
    local = loop_thread("local-loop")
    local.call_soon_threadsafe(
        lambda: spawn(local, local_waiter(other), "local-waiter"))
    time.sleep(0.3)
    ready()
    time.sleep(3600)


async def make_event():
    return asyncio.Event()


# ---- as_completed ---------------------------------------------------------

async def child(ev, done):
    if not done:
        await ev.wait()  # MARK: ac-child


async def iterate(ev):
    loop = asyncio.get_event_loop()
    kids = [spawn(loop, child(ev, i == 0), "ac-child-%d" % i)
            for i in range(3)]
    for f in asyncio.as_completed(kids):
        await f  # MARK: ac-iterate


# ---- gather ---------------------------------------------------------------

async def gatherer(ev):
    loop = asyncio.get_event_loop()
    kids = [spawn(loop, child(ev, i == 0), "g-child-%d" % i)
            for i in range(3)]
    await asyncio.gather(*kids)  # MARK: gatherer


async def async_main(coro_fn, name):
    loop = asyncio.get_event_loop()
    ev = asyncio.Event()
    task = spawn(loop, coro_fn(ev), name)
    await asyncio.sleep(0.3)
    ready()
    await task


# ---- cfuture --------------------------------------------------------------

def cfuture():
    fut = concurrent.futures.Future()

    def wait():
        fut.result()  # MARK: cf-blocked
    threading.Thread(target=wait, name="cf-waiter", daemon=True).start()
    time.sleep(0.3)
    ready()
    time.sleep(3600)


# ---- tornado --------------------------------------------------------------

def tornado_main():
    from tornado import gen

    @gen.coroutine
    def legacy(fut):
        yield gen.moment
        value = yield fut  # MARK: tornado-gen
        return value

    @gen.coroutine
    def outer(fut):
        value = yield legacy(fut)  # MARK: tornado-outer
        return value

    async def driver(fut):
        await outer(fut)  # MARK: tornado-driver

    async def run():
        loop = asyncio.get_event_loop()
        fut = loop.create_future()
        task = spawn(loop, driver(fut), "tornado-driver")
        # A second task driving its own pair: each task's drives are
        # its own.
        spawn(loop, driver(loop.create_future()), "tornado-driver-2")
        await asyncio.sleep(0.3)
        ready()
        await task

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(run())


def main():
    if SCENARIO == "threadsafe":
        threadsafe()
    elif SCENARIO == "cfuture":
        cfuture()
    elif SCENARIO == "tornado":
        tornado_main()
    else:
        fn = {"as_completed": iterate, "gather": gatherer}[SCENARIO]
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.run_until_complete(async_main(fn, SCENARIO))


main()
