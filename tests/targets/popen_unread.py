"""The classic subprocess deadlock, from both sides, for `coroscope run`:
Popen(stdout=PIPE).wait() while the child, under python -u, prints more
than a pipe holds.

Usage: popen_unread.py READY

READY gets this process's pid, the child's pid and the fd of the
pipe's read end this process holds, once the child sits in write(2).
Must run unchanged on CPython 3.6 through 3.14.
"""

import os
import subprocess
import sys
import time

from _ready import write_ready

CHILD = "print('x' * 1000000)\n"


def in_write(pid):
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] in ("1", "20")
    except (OSError, IndexError):
        return False


def main(path):
    child = subprocess.Popen([sys.executable, "-u", "-c", CHILD],
                             stdout=subprocess.PIPE)
    for _ in range(1000):
        if in_write(child.pid):
            break
        time.sleep(0.01)
    write_ready(path, {"pid": os.getpid(), "child": child.pid,
                       "fd": child.stdout.fileno()})
    child.wait()  # MARK: parent-waits


if __name__ == "__main__":
    main(sys.argv[1])
