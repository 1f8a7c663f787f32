"""A program held up by its main thread's (or main task's) wait, beside
helpers that wait for work: which comes first among `run`'s causes.

Usage: run_main_first.py MODE

- threads: a consumer thread in get() of an empty queue.Queue, a
  watcher thread waiting for a stop Event; the main thread waits for an
  Event nothing sets.
- tasks: two worker tasks in get() of an empty asyncio.Queue (two
  waiters, more than the main task's one); the main task,
  run_until_complete()'s, waits for an Event nothing sets.
Runs on 3.6+.
"""

import asyncio
import queue
import sys
import threading


def consumer(jobs):
    while True:
        if jobs.get() is None:  # MARK: main-first-consumer
            break


def threads():
    jobs, stop = queue.Queue(), threading.Event()
    threading.Thread(target=consumer, args=(jobs,), name="consumer",
                     daemon=True).start()
    threading.Thread(target=stop.wait, name="watcher", daemon=True).start()
    ready = threading.Event()
    ready.wait()  # MARK: main-first-thread


async def worker(jobs):
    while True:
        await jobs.get()  # MARK: main-first-worker
        jobs.task_done()


async def main():
    jobs = asyncio.Queue()
    workers = [asyncio.ensure_future(worker(jobs)) for _ in range(2)]
    ready = asyncio.Event()
    await ready.wait()  # MARK: main-first-task
    for w in workers:
        w.cancel()


if sys.argv[1] == "threads":
    threads()
else:
    asyncio.new_event_loop().run_until_complete(main())
