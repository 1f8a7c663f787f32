"""A queue's consumer that skips task_done() on one path, so that the
producer's join() never returns: the queue empty, the consumers back
in get().

Usage: join_without_done.py threads|asyncio.  Runs on 3.6+.
"""

import asyncio
import queue
import sys
import threading


def worker(q):
    while True:
        item = q.get()  # MARK: get
        if item == 3:
            continue  # (no task_done() on this path)
        q.task_done()


async def aworker(q):
    while True:
        item = await q.get()  # MARK: aget
        if item == 3:
            continue
        q.task_done()


async def amain():
    q = asyncio.Queue()
    for _ in range(2):
        asyncio.ensure_future(aworker(q))
    for i in range(6):
        q.put_nowait(i)
    await q.join()  # MARK: ajoin


if sys.argv[1] == "threads":
    work = queue.Queue()
    for _ in range(2):
        threading.Thread(target=worker, args=(work,), daemon=True).start()
    for i in range(6):
        work.put(i)
    work.join()  # MARK: join
else:
    asyncio.new_event_loop().run_until_complete(amain())
