"""A target for the wait-for graph on tornado's locks.

Usage: tornado_locks.py READY_FILE

On tornado's IOLoop (asyncio underneath): "holder" holds a
tornado.locks.Lock (`async with`) while it awaits a tornado.locks.Event
nobody sets (Event.wait() returns a future: no frame of tornado's is in
the wait), with "lock-waiter-1" and "lock-waiter-2" behind it;
"sem-waiter" waits on a tornado.locks.Semaphore at 0 (`async with`);
"not-on-event" awaits a future of its own whose done callback, a lambda
of this file, would set that Event: it waits on no Event.
The waits carry "# MARK:" comments.  Once all are parked, READY_FILE
gets the pid and what the primitives hold (JSON, written atomically).

Needs tornado (Debian's python3-tornado on /usr/bin/python3.11).
"""

import asyncio
import os
import sys

from tornado import ioloop, locks

from _ready import write_ready


async def holder(lock, never):
    async with lock:
        await never.wait()  # MARK: tornado-holder-parked


async def lock_waiter(lock):
    async with lock:  # MARK: tornado-lock-waiter
        pass


async def sem_waiter(sem):
    async with sem:  # MARK: tornado-sem-waiter
        pass


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
    lock, never, sem = locks.Lock(), locks.Event(), locks.Semaphore(0)
    tasks = [asyncio.ensure_future(holder(lock, never))]
    await asyncio.sleep(0.05)   # the holder holds first
    tasks += [asyncio.ensure_future(lock_waiter(lock)) for _ in range(2)]
    tasks.append(asyncio.ensure_future(sem_waiter(sem)))
    tasks.append(asyncio.ensure_future(not_on_event(never)))
    for task, name in zip(tasks, ("holder", "lock-waiter-1",
                                  "lock-waiter-2", "sem-waiter",
                                  "not-on-event")):
        task.set_name(name)
    await asyncio.sleep(0.2)
    # What tornado says: its reprs ("[locked,waiters:2]"), and for the
    # Event, which has no count in its repr, is_set() and its waiters.
    write_ready(ready, {
        "pid": os.getpid(),
        "lock": said(repr(lock)),
        "event": {"set": never.is_set(), "waiting": len(never._waiters)},
        "sem": said(repr(sem)),
    })
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    ioloop.IOLoop.current().run_sync(lambda: main(sys.argv[1]))
