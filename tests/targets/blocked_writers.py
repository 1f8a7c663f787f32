"""Threads asleep in write(2) on full pipes that nobody reads, through the
text stream CPython makes for python -u or PYTHONUNBUFFERED=1: a
TextIOWrapper with write_through over an unbuffered FileIO, which drops
what a short write(2) did not take.

Usage: blocked_writers.py READY once|loop

Thread "writer" and the main thread each write SIZE bytes to a pipe of
their own whose read end this process keeps open and never reads: "once"
then writes "END\\n" and sleeps, "loop" writes SIZE bytes again and again.
Thread "reporter" waits until both sit in write(2) and writes READY: the
pid, its own tid, SIZE, and per writer its tid, the fd it writes to and
the fd of the read end; then it sleeps (a thread coroscope stops).  Must run unchanged on CPython 3.6 through 3.14.
"""

import io
import os
import sys
import threading
import time

from _ready import write_ready

SIZE = 1000000


def unbuffered_text(fd):
    """What python -u gives sys.stdout: text written through at once to
    an unbuffered binary layer."""
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False),
                            encoding="ascii", write_through=True)


def writes_to(tid, fd):
    try:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            words = f.read().split()
    except OSError:
        return False
    return len(words) > 1 and words[0] == "1" and int(words[1], 16) == fd


def writer_tid(fd):
    for _ in range(2000):
        for name in os.listdir("/proc/self/task"):
            if writes_to(int(name), fd):
                return int(name)
        time.sleep(0.01)
    raise SystemExit("no thread ever blocked writing to fd %d" % fd)


def write_all(out, loop):
    while True:
        out.write("x" * SIZE)  # MARK: write
        if not loop:
            break
    out.write("END\n")


def thread_writes(out, loop):
    write_all(out, loop)  # MARK: thread-writes
    time.sleep(3600)


def report(path, pipes):
    tids = dict((name, writer_tid(w)) for name, (r, w) in pipes.items())
    me = int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])
    write_ready(path, {
        "pid": os.getpid(), "size": SIZE, "reporter": me,
        "writers": dict((name, [tids[name], w, r])
                        for name, (r, w) in pipes.items())})
    time.sleep(3600)  # MARK: reporter


def main(path, mode):
    pipes = {"writer": os.pipe(), "main": os.pipe()}
    loop = mode == "loop"
    threading.Thread(target=thread_writes, name="writer", daemon=True,
                     args=(unbuffered_text(pipes["writer"][1]), loop)).start()
    threading.Thread(target=report, name="reporter", daemon=True,
                     args=(path, pipes)).start()
    write_all(unbuffered_text(pipes["main"][1]), loop)  # MARK: main-writes
    time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
