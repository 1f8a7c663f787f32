"""A target for the wait-for graph on trio: when a nursery's parent waits
for its children, and who holds a lock given up inside its `with`.

Usage: trio_nursery_locks.py READY_FILE

  producer   opens a nursery; in its body, holding lock_a (`async with`),
             starts "worker", which waits for lock_a, then waits on an
             Event: it does not wait for its children (it would only at
             the nursery's end), so there is no cycle
  parent     holds lock_b around a nursery whose body has ended: at the
             nursery's end it waits for "child", which waits for lock_b:
             a real deadlock
  consumer   `async with lock_c: await cond.wait()` (cond a Condition on
             lock_c): it gave lock_c up; "other" took it and waits on an
             Event; "third" waits for lock_c: trio names "other" owner

The waits carry "# MARK:" comments.  Once all are parked, READY_FILE gets
the pid and the owners trio names (JSON, atomically).

Needs trio: Debian's python3-trio on /usr/bin/python3.11.
"""

import os
import sys

import trio

from _ready import write_ready


async def worker(lock_a):
    async with lock_a:  # MARK: worker
        pass


async def producer(lock_a, never):
    async with trio.open_nursery() as nursery:
        async with lock_a:
            nursery.start_soon(worker, lock_a, name="worker")
            await never.wait()  # MARK: producer


async def child(lock_b):
    async with lock_b:  # MARK: child
        pass


async def parent(lock_b):
    async with lock_b:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(child, lock_b, name="child")
        # MARK: parent (the nursery's end, the line above)


async def consumer(lock_c, cond):
    async with lock_c:
        await cond.wait()  # MARK: consumer


async def other(lock_c, never):
    async with lock_c:
        await never.wait()  # MARK: other


async def third(lock_c):
    async with lock_c:  # MARK: third
        pass


async def leaker(lock_d):
    await lock_d.acquire()


async def leak_waiter(lock_d):
    async with lock_d:  # MARK: leak-waiter
        pass


async def main(ready):
    lock_a, lock_b, lock_c = trio.Lock(), trio.Lock(), trio.Lock()
    lock_d = trio.Lock()
    cond, never = trio.Condition(lock_c), trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(producer, lock_a, never, name="producer")
        nursery.start_soon(parent, lock_b, name="parent")
        nursery.start_soon(consumer, lock_c, cond, name="consumer")
        nursery.start_soon(leaker, lock_d, name="leaker")
        await trio.sleep(0.05)
        nursery.start_soon(leak_waiter, lock_d, name="leak-waiter")
        nursery.start_soon(other, lock_c, never, name="other")
        await trio.sleep(0.05)
        nursery.start_soon(third, lock_c, name="third")
        await trio.sleep(0.2)
        write_ready(ready, {
            "pid": os.getpid(),
            "owners": dict((key, lock.statistics().owner.name)
                           for key, lock in (("a", lock_a), ("b", lock_b),
                                             ("c", lock_c), ("d", lock_d))),
            "leaker": id(lock_d.statistics().owner),
            "locks": {"a": id(lock_a), "b": id(lock_b), "c": id(lock_c),
                      "d": id(lock_d)}})
        await never.wait()


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
