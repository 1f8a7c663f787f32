"""A writer a reader keeps waking inside its write(2), on a crowded CPU.

Usage: woken_writer.py READY CPU

Thread "writer" writes 1 MiB chunks with os.write() to a pipe whose read
end this process keeps open, and counts the writes that returned short
(a stop inside the call cuts it short: python -u's print() would lose
the rest).  The process keeps to CPU number CPU, which a test crowds
with a busy process of its own: a writer a reader wakes then waits for
the CPU, "running" in its syscall file, before it sleeps in the call
again.  READY gets the pid, the writer's tid and the read end's fd;
READY.short the count of short writes, each time one happens.  Runs on
CPython 3.6 through 3.14.
"""

import os
import sys
import threading
import time

from _ready import write_ready

CHUNK = 1 << 20


def write_forever(fd, path, tids):
    tids.append(int(os.readlink("/proc/thread-self").rsplit("/", 1)[1]))
    data = b"x" * CHUNK
    short = 0
    while True:
        if os.write(fd, data) != CHUNK:  # MARK: write
            short += 1
            with open(path + ".short", "w") as f:
                f.write(str(short))


def main(path, cpu):
    os.sched_setaffinity(0, {cpu})
    r, w = os.pipe()
    tids = []
    threading.Thread(target=write_forever, name="writer", daemon=True,
                     args=(w, path, tids)).start()
    while not tids:
        time.sleep(0.01)
    write_ready(path, {"pid": os.getpid(), "writer": tids[0], "fd": r})
    time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
