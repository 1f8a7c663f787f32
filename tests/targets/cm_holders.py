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
- thread "es-holder" holds tlock2 through `with ExitStack() as st:
  st.enter_context(tlock2)`, thread "cb-holder" tlock3 through
  `tlock3.acquire(); st.callback(tlock3.release)`, each asleep in the
  stack's block; threads "es-waiter" and "cb-waiter" wait for them.
- threads "cbfirst-lock" and "cbfirst-rlock" register a lock's release
  with st.callback() and then block in its acquire(), the lock held by
  "other-lock" / "other-rlock" (`with`): a callback is no hold, so no
  self-wait; thread "es-self" entered a Lock into a stack and blocks in
  its acquire() again: a self-deadlock, after 40 files entered too.
- (3.7+) task "aes-holder" holds alock3 through `async with
  AsyncExitStack() as st: await st.enter_async_context(alock3)`;
  "aes-waiter" waits for it.
- (3.7+) task "rlock-task" holds a threading.RLock in a plain `with`
  across an await; thread "rlock-waiter" waits for it.  The RLock names
  the loop's thread its owner, but the task is its one holder.
Writes READY_FILE (JSON: pid, tids by name) once all wait.  Runs on
CPython 3.6+ (the asyncio part from 3.7).
"""

import asyncio
import contextlib
import io
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
    with lock:  # MARK: cm-takes
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


def es_holder(tlock, entered):
    _tids["es-holder"] = native_id()
    with contextlib.ExitStack() as st:
        st.enter_context(tlock)
        # more than the 32 managers kept, none a lock, after it
        for _ in range(40):
            st.enter_context(io.StringIO())
        entered.set()
        time.sleep(3600)  # MARK: es-parked


def cb_holder(tlock, entered):
    _tids["cb-holder"] = native_id()
    with contextlib.ExitStack() as st:
        tlock.acquire()
        st.callback(tlock.release)
        entered.set()
        time.sleep(3600)  # MARK: cb-parked


def start_stack_threads():
    """The ExitStack holders, then their waiters."""
    for holder, name in ((es_holder, "es"), (cb_holder, "cb")):
        tlock, entered = threading.Lock(), threading.Event()
        threading.Thread(target=holder, args=(tlock, entered),
                         name=name + "-holder", daemon=True).start()
        entered.wait()
        threading.Thread(target=stack_waiter, args=(tlock, name + "-waiter"),
                         name=name + "-waiter", daemon=True).start()


def cb_first(lock, name):
    _tids[name] = native_id()
    with contextlib.ExitStack() as st:
        st.callback(lock.release)
        lock.acquire()  # MARK: cb-first


def other_holds(lock, name, entered):
    _tids[name] = native_id()
    with lock:
        entered.set()
        time.sleep(3600)


def es_self():
    """A true self-deadlock through a stack: it entered the lock."""
    _tids["es-self"] = native_id()
    lock = threading.Lock()
    with contextlib.ExitStack() as st:
        st.enter_context(lock)
        lock.acquire()  # MARK: es-self


def start_callback_first():
    for kind, lock in (("lock", threading.Lock()),
                       ("rlock", threading.RLock())):
        entered = threading.Event()
        threading.Thread(target=other_holds,
                         args=(lock, "other-" + kind, entered),
                         name="other-" + kind, daemon=True).start()
        entered.wait()
        threading.Thread(target=cb_first, args=(lock, "cbfirst-" + kind),
                         name="cbfirst-" + kind, daemon=True).start()


def stack_waiter(tlock, name):
    _tids[name] = native_id()
    with tlock:
        pass


if sys.version_info >= (3, 7):
    async def aes_holder(lock, event):
        async with contextlib.AsyncExitStack() as st:
            await st.enter_async_context(lock)
            await event.wait()  # MARK: aes-parked

    @contextlib.asynccontextmanager
    async def aheld(lock):
        async with lock:  # MARK: acm-takes
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

    async def rlock_task(rlock, event):
        with rlock:  # MARK: rlock-takes
            await event.wait()  # MARK: rlock-task


async def main(ready):
    tlock, entered = threading.Lock(), threading.Event()
    threading.Thread(target=cm_holder, args=(tlock, entered),
                     name="cm-holder", daemon=True).start()
    entered.wait()
    threading.Thread(target=cm_waiter, args=(tlock,), name="cm-waiter",
                     daemon=True).start()
    start_stack_threads()
    start_callback_first()
    threading.Thread(target=es_self, name="es-self", daemon=True).start()
    if sys.version_info >= (3, 7):
        alock, alock2, never = asyncio.Lock(), asyncio.Lock(), asyncio.Event()
        alock3 = asyncio.Lock()
        for coro, name in ((acm_holder(alock, never), "acm-holder"),
                           (acm_nested(alock2, never), "acm-nested"),
                           (aes_holder(alock3, never), "aes-holder")):
            asyncio.ensure_future(coro).set_name(name) \
                if sys.version_info >= (3, 8) else asyncio.ensure_future(coro)
        await asyncio.sleep(0.1)
        for coro, name in ((acm_waiter(alock), "acm-waiter"),
                           (acm_waiter(alock2), "acm-waiter2"),
                           (acm_waiter(alock3), "aes-waiter")):
            task = asyncio.ensure_future(coro)
            if hasattr(task, "set_name"):
                task.set_name(name)
        rlock = threading.RLock()
        task = asyncio.ensure_future(rlock_task(rlock, never))
        if hasattr(task, "set_name"):
            task.set_name("rlock-task")
        await asyncio.sleep(0.1)
        threading.Thread(target=stack_waiter, args=(rlock, "rlock-waiter"),
                         name="rlock-waiter", daemon=True).start()
    await asyncio.sleep(0.3)
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "tids": _tids}, f)
    os.rename(ready + ".tmp", ready)
    await asyncio.sleep(3600)


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
