"""A target for the wait-for graph on trio: tasks parked on each of trio's
primitives, and the tasks holding them.

Usage: trio_graph.py READY_FILE

In one nursery: "holder" holds a trio.Lock (`async with`) while it waits
on a trio.Event, with "lock-waiter-1" and "lock-waiter-2" behind it;
"bare-holder" took a trio.StrictFIFOLock with a bare acquire() (no
`with`: only the lock's owner says who holds it) and sleeps, with
"fifo-waiter" behind it; "limit-holder" holds a trio.CapacityLimiter of
one token, with "limit-waiter" behind it; "sem-waiter" waits on a
trio.Semaphore at 0; "cond-waiter" in trio.Condition.wait(), and
"cond-notified" notified by "cond-notifier", which holds the Condition,
so waiting for its lock; a
zero-buffer memory channel with "receiver" in receive() and, on another,
"looper" in `async for`; "sender" blocked in send() on a third.  The
waits carry "# MARK:" comments.  Once all are parked, READY_FILE gets
the pid and what trio itself says of each primitive (its statistics(),
its owner's name), as JSON written atomically.

Needs trio: Debian's python3-trio on /usr/bin/python3.11.
"""

import os
import sys

import trio

from _ready import write_ready


async def holder(lock, never):
    async with lock:  # MARK: trio-holder-enters
        await never.wait()  # MARK: trio-holder-parked


async def lock_waiter(lock):
    async with lock:  # MARK: trio-lock-waiter
        pass


async def bare_holder(fifo):
    await fifo.acquire()  # MARK: trio-bare-acquired
    await trio.sleep_forever()  # MARK: trio-bare-holder


async def fifo_waiter(fifo):
    await fifo.acquire()  # MARK: trio-fifo-waiter


async def limit_holder(limiter):
    async with limiter:  # MARK: trio-limit-enters
        await trio.sleep_forever()  # MARK: trio-limit-parked


async def limit_waiter(limiter):
    async with limiter:  # MARK: trio-limit-waiter
        pass


async def sem_waiter(sem):
    await sem.acquire()  # MARK: trio-sem-waiter


async def cond_waiter(cond):
    async with cond:
        await cond.wait()  # MARK: trio-cond-waiter


async def cond_notifier(cond, never):
    async with cond:
        cond.notify()
        await never.wait()


async def receiver(channel):
    await channel.receive()  # MARK: trio-receiver


async def looper(channel):
    async for _ in channel:  # MARK: trio-looper
        pass


async def sender(channel):
    await channel.send("never taken")  # MARK: trio-sender


async def main(ready):
    lock, fifo = trio.Lock(), trio.StrictFIFOLock()
    never = trio.Event()
    limiter, sem = trio.CapacityLimiter(1), trio.Semaphore(0)
    cond, cond2 = trio.Condition(), trio.Condition()
    recv_send, recv_end = trio.open_memory_channel(0)
    loop_send, loop_end = trio.open_memory_channel(0)
    send_end, send_recv = trio.open_memory_channel(0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder, lock, never, name="holder")
        nursery.start_soon(bare_holder, fifo, name="bare-holder")
        nursery.start_soon(limit_holder, limiter, name="limit-holder")
        await trio.sleep(0.05)   # the holders hold first
        for i in (1, 2):
            nursery.start_soon(lock_waiter, lock, name="lock-waiter-%d" % i)
        nursery.start_soon(fifo_waiter, fifo, name="fifo-waiter")
        nursery.start_soon(limit_waiter, limiter, name="limit-waiter")
        nursery.start_soon(sem_waiter, sem, name="sem-waiter")
        nursery.start_soon(cond_waiter, cond, name="cond-waiter")
        nursery.start_soon(cond_waiter, cond2, name="cond-notified")
        await trio.sleep(0.05)
        nursery.start_soon(cond_notifier, cond2, never,
                           name="cond-notifier")
        nursery.start_soon(receiver, recv_end, name="receiver")
        nursery.start_soon(looper, loop_end, name="looper")
        nursery.start_soon(sender, send_end, name="sender")
        await trio.sleep(0.2)
        ls, fs = lock.statistics(), fifo.statistics()
        write_ready(ready, {
            "pid": os.getpid(),
            "lock": {"locked": ls.locked, "owner": ls.owner.name,
                     "waiting": ls.tasks_waiting},
            "fifo": {"locked": fs.locked, "owner": fs.owner.name,
                     "waiting": fs.tasks_waiting},
            "event": {"set": never.is_set(),
                      "waiting": never.statistics().tasks_waiting},
            "limiter": {"left": limiter.available_tokens,
                        "waiting": limiter.statistics().tasks_waiting},
            "sem": {"value": sem.value,
                    "waiting": sem.statistics().tasks_waiting},
            "cond": {"locked": cond.locked(),
                     "waiting": cond.statistics().tasks_waiting},
            "notified": {"locked": cond2.locked(),
                         "waiting": cond2.statistics().tasks_waiting,
                         "lock_waiting": cond2.statistics()
                         .lock_statistics.tasks_waiting},
            "receiver": vars_of(recv_end.statistics()),
            "looper": vars_of(loop_end.statistics()),
            "sender": vars_of(send_end.statistics()),
        })


def vars_of(stats):
    """A memory channel's buffer in use and the tasks waiting on it."""
    return {"used": stats.current_buffer_used,
            "waiting": stats.tasks_waiting_send +
            stats.tasks_waiting_receive}


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
