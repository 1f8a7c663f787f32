"""A target for the wait-for graph on tornado's locks.

Usage: tornado_locks.py READY_FILE

On tornado's IOLoop (asyncio underneath): "holder" holds a
tornado.locks.Lock (`async with`) while it awaits a tornado.locks.Event
nobody sets (Event.wait() returns a future: no frame of tornado's is in
the wait), with "lock-waiter-1" and "lock-waiter-2" behind it;
"sem-waiter" waits on a tornado.locks.Semaphore at 0 (`async with`);
"not-on-event" awaits a future of its own whose done callback, a lambda
of this file, would set that Event: it waits on no Event.
"gen-lock-waiter" and "gen-event-waiter" await a @gen.coroutine
generator (run by tornado's Runner, no task of its own) that yields the
Lock's acquire() (`with (yield lock.acquire())`), or the Event's
wait(): the task waits there, through the Runner's yielded future.
Waits that only a future shows (acquire(), wait(), get() and put()
return one; no frame of tornado's is in the wait): "queue-getter" on
an empty tornado.queues.Queue kept in a global, "queue-putter" on a
full one (maxsize 1), "prio-getter" on an empty PriorityQueue kept in
an attribute, "cond-waiter" on a Condition, "bare-sem" in a bare
`await sem.acquire()`.
The waits carry "# MARK:" comments.  Once all are parked, READY_FILE
gets the pid and what the primitives hold (JSON, written atomically).

Needs tornado (Debian's python3-tornado on /usr/bin/python3.11).
"""

import asyncio
import os
import sys

from tornado import gen, ioloop, locks, queues

from _ready import class_name, write_ready


async def holder(lock, never):
    async with lock:  # MARK: tornado-holder-takes
        await never.wait()  # MARK: tornado-holder-parked


async def lock_waiter(lock):
    async with lock:  # MARK: tornado-lock-waiter
        pass


@gen.coroutine
def gen_lock(lock):
    with (yield lock.acquire()):  # MARK: tornado-gen-lock-waiter
        pass


async def gen_lock_waiter(lock):
    await gen_lock(lock)


@gen.coroutine
def gen_event(never):
    yield never.wait()  # MARK: tornado-gen-event-waiter


async def gen_event_waiter(never):
    await gen_event(never)


async def sem_waiter(sem):
    async with sem:  # MARK: tornado-sem-waiter
        pass


QUEUE = None       # set in main(): a global, found by no frame


class Keeper(object):
    pass


KEEPER = Keeper()


async def queue_getter():
    await QUEUE.get()  # MARK: tornado-queue-getter


async def queue_putter(full):
    await full.put("b")  # MARK: tornado-queue-putter


async def prio_getter():
    await KEEPER.prio.get()  # MARK: tornado-prio-getter


async def cond_waiter(cond):
    await cond.wait()  # MARK: tornado-cond-waiter


async def bare_sem(sem):
    await sem.acquire()  # MARK: tornado-bare-sem


def queue_said(q):
    """A Queue's repr, "<Queue at 0x.. maxsize=1 queue=... putters[1]>",
    and qsize(): the test's states."""
    text, waiting = repr(q), 0
    for key in ("getters[", "putters["):
        if key in text:
            waiting += int(text.split(key, 1)[1].split("]", 1)[0])
    return {"used": q.qsize(), "maxsize": q.maxsize, "waiting": waiting}


async def not_on_event(never):
    fut = asyncio.get_event_loop().create_future()
    fut.add_done_callback(lambda _: never.set())
    await fut  # MARK: tornado-not-on-event


def said(text):
    """A Lock's or Semaphore's repr, "<... [locked,waiters:2]>" or
    "[unlocked,value:1]", as the test's states: locked, value, waiting."""
    state = text.rsplit("[", 1)[1].split("]", 1)[0].split(",")
    out = {"locked": state[0] == "locked", "waiting": 0,
           "value": 0 if state[0] == "locked" else None}
    for item in state[1:]:
        key, value = item.split(":")
        out["waiting" if key == "waiters" else key] = int(value)
    return out


async def main(ready):
    global QUEUE
    lock, never, sem = locks.Lock(), locks.Event(), locks.Semaphore(0)
    QUEUE, full = queues.Queue(), queues.Queue(maxsize=1)
    full.put_nowait("a")
    KEEPER.prio = queues.PriorityQueue()
    cond, sem2 = locks.Condition(), locks.Semaphore(0)
    tasks = [asyncio.ensure_future(holder(lock, never))]
    await asyncio.sleep(0.05)   # the holder holds first
    tasks += [asyncio.ensure_future(lock_waiter(lock)) for _ in range(2)]
    tasks.append(asyncio.ensure_future(sem_waiter(sem)))
    tasks.append(asyncio.ensure_future(not_on_event(never)))
    tasks += [asyncio.ensure_future(c) for c in (
        queue_getter(), queue_putter(full), prio_getter(), cond_waiter(cond),
        bare_sem(sem2), gen_lock_waiter(lock), gen_event_waiter(never))]
    for task, name in zip(tasks, ("holder", "lock-waiter-1",
                                  "lock-waiter-2", "sem-waiter",
                                  "not-on-event", "queue-getter",
                                  "queue-putter", "prio-getter",
                                  "cond-waiter", "bare-sem",
                                  "gen-lock-waiter", "gen-event-waiter")):
        task.set_name(name)
    await asyncio.sleep(0.2)
    # What tornado says: its reprs ("[locked,waiters:2]"), and for the
    # Event, which has no count in its repr, is_set() and its waiters.
    write_ready(ready, {
        "pid": os.getpid(),
        "lock": said(repr(lock)),
        "event": {"set": never.is_set(), "waiting": len(never._waiters)},
        "sem": said(repr(sem)),
        "queue": queue_said(QUEUE),
        "full": queue_said(full),
        "prio": queue_said(KEEPER.prio),
        "prio_class": class_name(KEEPER.prio, queues),
        # "<Condition waiters[1]>"
        "cond": {"waiting": int(repr(cond).split("waiters[", 1)[1]
                                .split("]", 1)[0])},
        "sem2": said(repr(sem2)),
    })
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    ioloop.IOLoop.current().run_sync(lambda: main(sys.argv[1]))
