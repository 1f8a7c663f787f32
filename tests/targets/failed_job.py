"""An executor's job that raised, and what waits for its work.

Usage: failed_job.py READY_FILE

A ThreadPoolExecutor's job, producer(), raises in json.loads() (in the
json module); the main thread waits on the queue it would have filled.
Nothing asks for its Future's result: its exception is silent for ever.
Beside it, two failed jobs whose exceptions were taken: one whose
result() raised it again (caught), one with a done callback.

READY_FILE gets, as JSON, "pid", and for each job ("silent", "handled",
"callback") its Future's id(), its exception's class (__module__,
__name__) and args' repr(), and traceback.extract_tb() of it (file,
line, name).
"""

import concurrent.futures
import json
import os
import queue
import sys
import traceback

from _ready import write_ready


def producer(q):
    rows = json.loads("[1, 2,")  # MARK: json
    for r in rows:
        q.put(r)


def handled(n):
    raise KeyError(n)  # MARK: handled


def describe(fut):
    exc = fut.exception()
    return {"id": id(fut),
            "type": [type(exc).__module__, type(exc).__name__],
            "args": [repr(a) for a in exc.args],
            "frames": [[f[0], f[1], f[2]] for f in
                       traceback.extract_tb(exc.__traceback__)]}


q = queue.Queue()
pool = concurrent.futures.ThreadPoolExecutor(1)
silent = pool.submit(producer, q)
caught = pool.submit(handled, 1)
try:
    caught.result()
except KeyError:
    pass
called = pool.submit(handled, 2)
called.add_done_callback(lambda f: None)
concurrent.futures.wait([silent, caught, called])
write_ready(sys.argv[1], {"pid": os.getpid(), "silent": describe(silent),
                          "handled": describe(caught),
                          "callback": describe(called)})
while True:
    item = q.get()  # MARK: get
    print(item)
