"""Children blocked writing to pipes, with readers that a report must
tell apart, for `coroscope run` and `dump`.

Usage: pipe_readers.py READY wait|slow|fork|pipeline

wait: the classic subprocess deadlock, Popen(stdout=PIPE).wait() while
  the child, under python -u, prints 1,000,000 characters (more than a
  pipe holds).
slow: the child prints 40,000,000 characters under python -u to a
  Popen(stdout=PIPE) parent that reads them, 4 KB every 5 ms: slow, not
  stuck.
fork: a forked child (no exec) writes 1,000,000 bytes to a pipe whose
  read end it kept, as its parent did, which never reads it.
pipeline: the child prints 1,000,000 characters under python -u into a
  pipe to a sibling, `sleep 3600`, which never reads (a shell's
  `python app.py | sleep 3600`); this process holds neither end and
  waits for the sibling.  READY's "sibling" is its pid, "fd" 0.
READY gets this process's pid, the child's pid and the fd of the read
end this process holds (for fork, the same number in both), once the
child sits in write(2).
Must run unchanged on CPython 3.6 through 3.14.
"""

import os
import subprocess
import sys
import time

from _ready import write_ready


def in_write(pid):
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] in ("1", "20")
    except (OSError, IndexError):
        return False


def wait_writing(pid):
    for _ in range(1000):
        if in_write(pid):
            return
        time.sleep(0.01)


def printing_child(path, count):
    """A child printing count characters under python -u to our pipe,
    in write(2) by the time READY is written."""
    child = subprocess.Popen([sys.executable, "-u", "-c",
                              "print('x' * %d)" % count],
                             stdout=subprocess.PIPE)
    wait_writing(child.pid)
    write_ready(path, {"pid": os.getpid(), "child": child.pid,
                       "fd": child.stdout.fileno()})
    return child


def wait(path):
    printing_child(path, 1000000).wait()  # MARK: parent-waits


def slow(path):
    child = printing_child(path, 40000000)
    while child.stdout.read(4096):
        time.sleep(0.005)  # MARK: slow-reads
    child.wait()


def fork(path):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, b"x" * 1000000)  # MARK: fork-writes
        os._exit(0)
    wait_writing(pid)
    write_ready(path, {"pid": os.getpid(), "child": pid, "fd": r})
    time.sleep(3600)  # MARK: parent-sleeps


def pipeline(path):
    writer = subprocess.Popen([sys.executable, "-u", "-c",
                               "print('x' * 1000000)"],
                              stdout=subprocess.PIPE)
    reader = subprocess.Popen(["sleep", "3600"], stdin=writer.stdout)
    writer.stdout.close()
    wait_writing(writer.pid)
    write_ready(path, {"pid": os.getpid(), "child": writer.pid,
                       "sibling": reader.pid, "fd": 0})
    reader.wait()  # MARK: parent-waits-pipeline


if __name__ == "__main__":
    {"wait": wait, "slow": slow, "fork": fork,
     "pipeline": pipeline}[sys.argv[2]](sys.argv[1])
