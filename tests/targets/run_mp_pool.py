"""A `coroscope run` target: multiprocessing.Pool(2).map() of jobs one
of which never ends, so map() never returns.

Usage: run_mp_pool.py READY_FILE [START_METHOD]

The job for 3 sleeps for good in one worker; the other worker, done
with the rest, waits for tasks (idle by design: its task queue is a
pipe the parent holds the write end of, which it writes when it has
work).  Writes READY_FILE (JSON: the parent's pid and the hung worker's)
once that job runs.  Runs on 3.6+, with the "fork" start method unless
START_METHOD says another ("forkserver": the workers are the fork
server's children, not the parent's).
"""

import json
import multiprocessing
import os
import sys
import time


def work(args):
    x, ready = args
    if x == 3:
        with open(ready + ".tmp", "w") as f:
            json.dump({"pid": os.getppid(), "worker": os.getpid()}, f)
        os.rename(ready + ".tmp", ready)
        time.sleep(3600)  # MARK: mp-job
    return x * 2


if __name__ == "__main__":
    ctx = multiprocessing.get_context(
        sys.argv[2] if len(sys.argv) > 2 else "fork")
    with ctx.Pool(2) as pool:
        print(pool.map(work, [(x, sys.argv[1]) for x in range(6)]))
