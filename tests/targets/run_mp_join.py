"""A `coroscope run` target: multiprocessing's join deadlock the other
way round: the parent joins a Process that waits in Queue.get() for a
message the parent never puts.

Usage: run_mp_join.py READY_FILE.  Writes READY_FILE (JSON: the parent's
pid and the child's) once the child waits.  Runs on 3.6+ ("fork").
"""

import json
import multiprocessing
import os
import sys
import time


def child(q):
    q.get()  # MARK: child-gets


if __name__ == "__main__":
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    time.sleep(0.3)
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "child": p.pid}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    p.join()  # MARK: parent-joins
