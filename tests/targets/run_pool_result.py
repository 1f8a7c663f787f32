"""A `coroscope run` target: a thread waiting in Future.result() for a
ProcessPoolExecutor job that never ends.

Usage: run_pool_result.py READY_FILE [START_METHOD]

The job sleeps for good in the pool's one worker process; the main
thread waits for its result.  Writes READY_FILE (JSON: the worker's
pid) once the job runs.  Runs on 3.6+; START_METHOD (3.7+) is
multiprocessing's ("forkserver": the worker is the fork server's child,
not the parent's), else the interpreter's default.
"""

import concurrent.futures
import json
import multiprocessing
import os
import sys
import time


def job(ready):
    with open(ready + ".tmp", "w") as f:
        json.dump({"worker": os.getpid()}, f)
    os.rename(ready + ".tmp", ready)
    time.sleep(3600)  # MARK: job-sleep


if __name__ == "__main__":
    kw = {}
    if len(sys.argv) > 2:
        kw["mp_context"] = multiprocessing.get_context(sys.argv[2])
    with concurrent.futures.ProcessPoolExecutor(1, **kw) as pool:
        pool.submit(job, sys.argv[1]).result()  # MARK: result
