"""A `coroscope run` target: an asyncio program whose job runs in a
process pool's worker that multiprocessing forked.

Usage: run_pool_fork.py READY_FILE

The main task awaits run_in_executor() of a job that sleeps for good in
the one worker; a second task waits on an Event nothing sets.  The
worker was forked during the main task's step, so it holds copies of
both tasks, the main one "running" on its thread, which it will never
run.  Writes READY_FILE (JSON: pid) once the job runs.  Runs on 3.6+
(the "fork" start method asked for where it can be, 3.7+).
"""

import asyncio
import concurrent.futures
import json
import multiprocessing
import os
import sys
import time


def job(ready):
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getppid(), "worker": os.getpid()}, f)
    os.rename(ready + ".tmp", ready)
    time.sleep(3600)  # MARK: job-sleep


async def other(event):
    await event.wait()


async def main(ready):
    loop = asyncio.get_event_loop()
    side = asyncio.ensure_future(other(asyncio.Event()))
    kw = {}
    if sys.version_info >= (3, 7):
        kw["mp_context"] = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(1, **kw) as pool:
        await loop.run_in_executor(pool, job, ready)  # MARK: await-job
    await side


# (3.14's get_event_loop() makes none outside a running loop)
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
