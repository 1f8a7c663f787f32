"""A parent that starts a multiprocessing child (forked) from inside a
loop over its own generator, and joins it; the child sleeps for ever.
The child holds a copy of the generator, suspended as at the fork.

Usage: fork_in_generator_loop.py READY_FILE.  Runs on 3.6+.

READY_FILE gets the pid, the child's pid and id() of the generator, as
JSON.
"""

import multiprocessing
import os
import sys
import time

from _ready import write_ready


def rows():
    for i in range(3):
        yield i  # MARK: rows


def child():
    time.sleep(3600)  # MARK: child


if __name__ == "__main__":
    mp = multiprocessing.get_context("fork")
    gen = rows()
    for r in gen:
        p = mp.Process(target=child)
        p.start()
        write_ready(sys.argv[1], {"pid": os.getpid(), "child": p.pid,
                                  "gen": id(gen)})
        p.join()  # MARK: join
