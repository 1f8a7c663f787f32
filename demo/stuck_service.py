"""A small service that gets stuck, for `make demo`.

Two worker threads deadlock on a pair of locks (each holds one and waits
for the other), a third waits for a job that never comes, and the main
thread runs an asyncio event loop where a cache refresh waits on a
gather of fetches that never finish, and two tasks await each other.  From
the outside all of it looks like a process sleeping in futex and epoll;
coroscope shows where each thread really is.

Usage: python stuck_service.py READY_FILE
"""
import asyncio
import os
import queue
import sys
import threading
import time

accounts_lock = threading.Lock()
ledger_lock = threading.Lock()
jobs = queue.Queue()


def transfer(amount):
    with accounts_lock:
        time.sleep(0.1)
        with ledger_lock:
            return amount


def reconcile(day):
    with ledger_lock:
        time.sleep(0.1)
        with accounts_lock:
            return day


def job_worker():
    while True:
        job = jobs.get()
        job()


async def fetch_rates(source, done):
    await done.wait()
    return source


async def refresh_cache(done):
    rates = await asyncio.gather(fetch_rates("ecb", done),
                                 fetch_rates("fed", done))
    return rates


async def ping():
    await tasks["pong"]


async def pong():
    await tasks["ping"]


tasks = {}


async def main(ready_file):
    done = asyncio.Event()
    task = asyncio.ensure_future(refresh_cache(done))
    for name, coro in (("ping", ping()), ("pong", pong())):
        tasks[name] = asyncio.ensure_future(coro)
        if hasattr(tasks[name], "set_name"):    # 3.8+
            tasks[name].set_name(name)
    await asyncio.sleep(0.3)
    with open(ready_file + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready_file + ".tmp", ready_file)
    await task


if __name__ == "__main__":
    threading.Thread(target=transfer, args=(100,), name="transfer",
                     daemon=True).start()
    threading.Thread(target=reconcile, args=("monday",), name="reconcile",
                     daemon=True).start()
    threading.Thread(target=job_worker, name="job-worker", daemon=True).start()
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
