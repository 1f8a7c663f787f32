"""Threads waiting for children blocked writing to a pipe whose read end
the waiting process holds and does not read: Popen(stdout=PIPE).wait(),
the deadlock the subprocess documentation warns of; and for one blocked
reading a pipe whose write end it holds open.

Usage: child_pipes.py READY

Thread "out-waiter" waits for a child blocked writing to its stdout,
"err-waiter" for one blocked writing to its stderr, "in-waiter" for one
blocked reading its stdin to the end (Popen(stdin=PIPE) never written
to nor closed), "mixed-waiter" for one whose main thread idles reading
a pipe of its own while another thread is blocked writing to its
stdout, and "sleep-waiter" for a child that only sleeps (no pipe).  Once the two writers sit in write(2) and the reader in read(2),
READY gets the pid and, per waiter, its child's pid and the fd of the
pipe's end this process holds (the read end, the write end for
"in").
Must run unchanged on CPython 3.6 through 3.14.
"""

import os
import subprocess
import sys
import threading
import time

from _ready import write_ready

WRITE = "import os; os.write(%d, b'x' * 1000000)"
# (Python ignores SIGPIPE: once this process is gone the writing thread
# ends with an EPIPE, and the main thread would read on for ever; a
# watcher ends the child when its parent goes.)
MIXED = ("import os, threading, time\n"
         "r, w = os.pipe()\n"
         "parent = os.getppid()\n"
         "def watch():\n"
         "    while os.getppid() == parent:\n"
         "        time.sleep(0.2)\n"
         "    os._exit(0)\n"
         "threading.Thread(target=watch, daemon=True).start()\n"
         "threading.Thread(target=os.write, args=(1, b'x' * 1000000))"
         ".start()\n"
         "os.read(r, 1)\n")


def in_call(pid, nr):
    try:
        with open("/proc/%d/syscall" % pid) as f:
            return f.read().split()[0] == nr
    except (OSError, IndexError):
        return False


def in_write(pid):
    return in_call(pid, "1")


def main(path):
    out = subprocess.Popen([sys.executable, "-c", WRITE % 1],
                           stdout=subprocess.PIPE)
    err = subprocess.Popen([sys.executable, "-c", WRITE % 2],
                           stderr=subprocess.PIPE)
    reader = subprocess.Popen([sys.executable, "-c",
                               "import os\nwhile os.read(0, 65536): pass\n"],
                              stdin=subprocess.PIPE)
    mixed = subprocess.Popen([sys.executable, "-c", MIXED],
                             stdout=subprocess.PIPE)
    # (it ends with this process; the writers by EPIPE then, the
    # reader at its stdin's end)
    sleeper = subprocess.Popen([sys.executable, "-c",
                                "import os, time\n"
                                "parent = os.getppid()\n"
                                "while os.getppid() == parent:\n"
                                "    time.sleep(0.2)\n"])
    for name, p in (("out-waiter", out), ("err-waiter", err),
                    ("in-waiter", reader), ("mixed-waiter", mixed),
                    ("sleep-waiter", sleeper)):
        threading.Thread(target=p.wait, name=name, daemon=True).start()
    for _ in range(1000):
        if in_write(out.pid) and in_write(err.pid) and \
                in_call(reader.pid, "0") and in_call(mixed.pid, "0"):
            break
        time.sleep(0.01)
    time.sleep(0.2)
    write_ready(path, {"pid": os.getpid(),
                       "out": [out.pid, out.stdout.fileno()],
                       "err": [err.pid, err.stderr.fileno()],
                       "in": [reader.pid, reader.stdin.fileno()],
                       "mixed": [mixed.pid, mixed.stdout.fileno()],
                       "sleeper": sleeper.pid})
    try:
        time.sleep(3600)
    finally:
        for p in (out, err, reader, mixed, sleeper):
            p.kill()


if __name__ == "__main__":
    main(sys.argv[1])
