"""A target with a million suspended generators, for coroscope's big-heap tests.

Usage: many_gens_target.py READY_FILE [COUNT [thread]]

COUNT (default 1000000) generators of one function are started and left
suspended at the same yield, each holding its number and one object of
a plain class (locals that --locals shows, one a generic repr); once they all are, the main thread writes
to READY_FILE (atomically) how many it holds, then parks.  With "thread"
a short-lived thread makes them and exits first: in a free-threaded
build its heap pages then belong to no live thread (mimalloc's abandoned
pool).

Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import threading
import time


class Kept(object):
    pass


KEPT = Kept()


def held(i, kept):
    yield i  # MARK: held-yield


def main():
    ready = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    gens = []

    def make():
        gens.extend(held(i, KEPT) for i in range(count))
        for g in gens:
            next(g)

    if sys.argv[3:] == ["thread"]:
        maker = threading.Thread(target=make, name="maker")
        maker.start()
        maker.join()
    else:
        make()
    tmp = ready + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "count": count}, f)
    os.rename(tmp, ready)
    time.sleep(1e6)  # MARK: main-park
    return gens


if __name__ == "__main__":
    main()
