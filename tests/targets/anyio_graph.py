"""A target for the wait-for graph on anyio's own primitives.

Usage: anyio_graph.py READY_FILE [asyncio|trio]

In one task group, on anyio's asyncio backend (or its trio one): "holder"
holds an anyio.Lock (`async with`) while it waits on an anyio.Event,
with "lock-waiter" behind it; "bare-holder" took another with a bare
acquire() and sleeps, with "bare-waiter" behind it; "sem-waiter" waits
on an anyio.Semaphore at 0; "cond-waiter" in anyio.Condition.wait();
"cond-notified" notified by "cond-notifier", which holds the Condition,
so waiting for its lock; "stream-receiver" in receive() on a memory
object stream of no buffer, "stream-sender" in send() on another, and
"inf-receiver" in receive() on an unbounded one (math.inf);
and two tasks run blocking calls through anyio.to_thread.run_sync() on
a CapacityLimiter of one token: "offload-1" holds it (its thread waits
on a threading.Event), "offload-2" waits for it.  The waits carry
"# MARK:" comments.  Once all are parked, READY_FILE gets the pid and
what anyio itself says of each primitive (its statistics()), as JSON
written atomically.

Needs anyio (and trio for its trio backend): Debian's python3-anyio and
python3-trio on /usr/bin/python3.11.
"""

import math
import os
import sys
import threading

import anyio
import anyio.to_thread

from _ready import write_ready


async def holder(lock, never):
    async with lock:  # MARK: anyio-holder-takes
        await never.wait()  # MARK: anyio-holder-parked


async def lock_waiter(lock):
    async with lock:  # MARK: anyio-lock-waiter
        pass


async def bare_holder(lock):
    await lock.acquire()
    await anyio.sleep(3600)  # MARK: anyio-bare-holder


async def bare_waiter(lock):
    await lock.acquire()  # MARK: anyio-bare-waiter


async def sem_waiter(sem):
    await sem.acquire()  # MARK: anyio-sem-waiter


async def cond_waiter(cond):
    async with cond:
        await cond.wait()  # MARK: anyio-cond-waiter


async def cond_notifier(cond, never):
    async with cond:
        cond.notify()
        await never.wait()


async def stream_receiver(stream):
    await stream.receive()  # MARK: anyio-stream-receiver


async def stream_sender(stream):
    await stream.send("never taken")  # MARK: anyio-stream-sender


async def offload(limiter, blocker):
    run = anyio.to_thread.run_sync
    await run(blocker.wait, limiter=limiter, cancellable=True)  # MARK: anyio-offload


async def main(ready):
    lock, bare = anyio.Lock(), anyio.Lock()
    never = anyio.Event()
    sem = anyio.Semaphore(0)
    cond, cond2 = anyio.Condition(), anyio.Condition()
    limiter = anyio.CapacityLimiter(1)
    recv_send, recv_end = anyio.create_memory_object_stream(0)
    send_end, send_recv = anyio.create_memory_object_stream(0)
    inf_send, inf_end = anyio.create_memory_object_stream(math.inf)
    blocker = threading.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(holder, lock, never, name="holder")
        tg.start_soon(bare_holder, bare, name="bare-holder")
        tg.start_soon(offload, limiter, blocker, name="offload-1")
        tg.start_soon(cond_waiter, cond2, name="cond-notified")
        await anyio.sleep(0.05)   # the holders hold first
        tg.start_soon(lock_waiter, lock, name="lock-waiter")
        tg.start_soon(bare_waiter, bare, name="bare-waiter")
        tg.start_soon(sem_waiter, sem, name="sem-waiter")
        tg.start_soon(cond_waiter, cond, name="cond-waiter")
        tg.start_soon(cond_notifier, cond2, never, name="cond-notifier")
        tg.start_soon(offload, limiter, blocker, name="offload-2")
        tg.start_soon(stream_receiver, recv_end, name="stream-receiver")
        tg.start_soon(stream_sender, send_end, name="stream-sender")
        tg.start_soon(stream_receiver, inf_end, name="inf-receiver")
        await anyio.sleep(0.2)
        write_ready(ready, {
            "pid": os.getpid(),
            "lock": lock_said(lock),
            "bare": lock_said(bare),
            "event": {"set": never.is_set(), "id": id(never),
                      "waiting": never.statistics().tasks_waiting},
            "sem": {"value": sem.value,
                    "waiting": sem.statistics().tasks_waiting},
            "cond": {"locked": cond.locked(),
                     "waiting": cond.statistics().tasks_waiting},
            "notified": {"locked": cond2.locked(),
                         "waiting": cond2.statistics().tasks_waiting,
                         "lock_waiting": cond2.statistics()
                         .lock_statistics.tasks_waiting},
            "limiter": {"left": int(limiter.available_tokens),
                        "waiting": limiter.statistics().tasks_waiting},
            "receiver": stream_said(recv_end.statistics()),
            "sender": stream_said(send_end.statistics()),
            "unbounded": stream_said(inf_end.statistics()),
        })


def stream_said(stats):
    """A memory object stream's buffer in use and the tasks waiting on
    it."""
    return {"used": stats.current_buffer_used,
            "waiting": stats.tasks_waiting_send +
            stats.tasks_waiting_receive}


def lock_said(lock):
    """What anyio says of a Lock: held, by whom, with how many waiting."""
    stats = lock.statistics()
    return {"locked": stats.locked, "owner": stats.owner.name,
            "waiting": stats.tasks_waiting}


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], backend=(sys.argv[2:] or ["asyncio"])[0])
