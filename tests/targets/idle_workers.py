"""A target with a pool worker idle by design beside one stuck in a job.

Usage: idle_workers.py READY_FILE [gevent]

  executor   a ThreadPoolExecutor(2) whose two workers each ran one job
             (both at once: a barrier makes it two threads); then one
             runs a job that is time.sleep() itself (C, called from the
             executor's code: no frame of the program's inside the
             worker's loop) and the other waits for work
  with gevent (Debian's python3-gevent), also a gevent ThreadPool(2)
             the same way

READY_FILE (JSON): pid, and each pool's two workers' kernel thread ids
(which of the two sleeps is the pool's choice).
"""

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from _ready import write_ready
from _tids import native_tid


def two_workers(submit):
    """The tids of two workers of a pool, each made to run a job."""
    barrier = threading.Barrier(2)
    tids = []

    def job():
        tids.append(native_tid())
        barrier.wait()

    return submit(job), submit(job), tids


def main():
    record = {"pid": os.getpid()}
    pool = ThreadPoolExecutor(2)
    a, b, tids = two_workers(pool.submit)
    a.result()
    b.result()
    record["executor"] = tids
    pool.submit(time.sleep, 3600)
    if sys.argv[2:3] == ["gevent"]:
        import gevent.threadpool
        gpool = gevent.threadpool.ThreadPool(2)
        a, b, tids = two_workers(gpool.spawn)
        a.get()
        b.get()
        record["gevent"] = tids
        gpool.spawn(time.sleep, 3600)
    time.sleep(0.3)  # the sleeps begin
    write_ready(sys.argv[1], record)
    while True:
        time.sleep(3600)


main()
