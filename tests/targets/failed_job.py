"""An executor's job that raised, and what waits for its work.

Usage: failed_job.py READY_FILE [pool|procs|awaited]

A ThreadPoolExecutor's job, producer(), raises in json.loads() (in the
json module); the main thread waits on the queue it would have filled.
Nothing asks for its Future's result: its exception is silent for ever.
Beside it, two failed jobs whose exceptions were taken: one whose
result() raised it again (caught), one with a done callback; and a job,
inner_wait(), whose result() of another job's Future raised the other's
exception in it: one exception, two Futures, one cause (the outer's).

With "pool", the same of a multiprocessing ThreadPool's apply_async()
(the handled one's get() raised it, the third has an error_callback),
and a process Pool's job that raised in its child ("child": its
ApplyResult's id and exception only: no traceback crosses, but its
text does, as the exception's __cause__).

With "procs", two ProcessPoolExecutor jobs that raised in the worker
process: crunch() ("child"), and evil() ("evil"), compiled from a file
name holding a quote, ESC, BEL and a newline, so that the traceback's
text the worker sends back has its entry's line cut in two there.

With "awaited", an asyncio task awaits loop.run_in_executor() of a
ProcessPoolExecutor's job, crunch(), that raised in the worker
process; the task ends with its exception, raised again at its await
("awaits-job"), kept referenced, the loop stopped: "task" gets its id()
and the exception's class and args, as a job's.

READY_FILE gets, as JSON, "pid", and for each job ("silent", "handled",
"callback", "outer") its Future's id(), its exception's class (__module__,
__name__) and args' repr(), and traceback.extract_tb() of it (file,
line, name).
"""

import concurrent.futures
import json
import os
import queue
import sys
import threading
import traceback

from _ready import write_ready


def producer(q):
    rows = json.loads("[1, 2,")  # MARK: json
    for r in rows:
        q.put(r)


def handled(n):
    raise KeyError(n)  # MARK: handled


def handled_once(gate, n):
    gate.wait()
    handled(n)


def describe(fut):
    exc = fut.exception() if hasattr(fut, "exception") else fut._value
    return {"id": id(fut),
            "type": [type(exc).__module__, type(exc).__name__],
            "args": [repr(a) for a in exc.args],
            "frames": [[f[0], f[1], f[2]] for f in
                       traceback.extract_tb(exc.__traceback__)]}


def crunch(n):
    raise ValueError("chunk %d" % n)  # MARK: crunch


EVIL_FILE = 'ev"il\x1b[31m\x07\n.py'
exec(compile("def evil(n):\n    raise KeyError(n)\n", EVIL_FILE, "exec"))


def process_jobs(q):
    procs = concurrent.futures.ProcessPoolExecutor(1)
    child = procs.submit(crunch, 4)
    bad = procs.submit(evil, 5)
    concurrent.futures.wait([child, bad])
    return None, None, None, child, None, bad


async def awaits_job(procs):
    import asyncio
    loop = asyncio.get_event_loop()
    return await loop.run_in_executor(procs, crunch, 6)  # MARK: awaits-job


def awaited_jobs(q):
    import asyncio
    procs = concurrent.futures.ProcessPoolExecutor(1)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    task = loop.create_task(awaits_job(procs))
    # (asyncio.wait() asks for no exception)
    loop.run_until_complete(asyncio.wait([task]))
    return task


def describe_task(task):
    exc = task._exception  # (task.exception() would retrieve it)
    return {"id": id(task),
            "type": [type(exc).__module__, type(exc).__name__],
            "args": [repr(a) for a in exc.args]}


def inner_wait(pool):
    return pool.submit(nested).result()  # MARK: inner-wait


def nested():
    raise ValueError("nested")


def executor_jobs(q):
    pool = concurrent.futures.ThreadPoolExecutor(2)
    silent = pool.submit(producer, q)
    caught = pool.submit(handled, 1)
    try:
        caught.result()
    except KeyError:
        pass
    # (a callback added once the job is done runs at once and is not
    # kept: the job waits until it is added)
    gate = threading.Event()
    called = pool.submit(handled_once, gate, 2)
    called.add_done_callback(lambda f: None)
    gate.set()
    outer = pool.submit(inner_wait, pool)
    concurrent.futures.wait([silent, caught, called, outer])
    return silent, caught, called, None, outer


def pool_jobs(q):
    import multiprocessing.pool
    pool = multiprocessing.pool.ThreadPool(1)
    silent = pool.apply_async(producer, (q,))
    caught = pool.apply_async(handled, (1,))
    try:
        caught.get()
    except KeyError:
        pass
    called = pool.apply_async(handled, (2,), error_callback=lambda e: None)
    procs = multiprocessing.Pool(1)
    child = procs.apply_async(crunch, (3,))
    for r in (silent, called, child):
        r.wait()
    return silent, caught, called, child


if __name__ == "__main__":
    q = queue.Queue()
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    doc = {"pid": os.getpid()}
    if mode == "awaited":
        task = awaited_jobs(q)
        doc["task"] = describe_task(task)
        jobs = ()
    else:
        jobs = {"pool": pool_jobs, "procs": process_jobs}.get(
            mode, executor_jobs)(q)
    for name, job in zip(("silent", "handled", "callback", "child",
                          "outer", "evil"), jobs):
        if job is not None:
            doc[name] = describe(job)
    write_ready(sys.argv[1], doc)
    while True:
        item = q.get()  # MARK: get
        print(item)
