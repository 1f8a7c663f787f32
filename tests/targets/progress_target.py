"""A target that keeps making progress, for coroscope's control tests.

Usage: progress_target.py READY_FILE COUNTER_FILE [IDLE_THREADS]

The main thread and one worker thread each increment a counter every
20 ms; the main thread rewrites COUNTER_FILE ("MAIN WORKER") atomically
every 50 ms.  A test that sees both numbers keep growing knows every
thread of the target is running: not left stopped, not still traced.
IDLE_THREADS more threads (named idle-N) wait on an event that is never
set: enough of them make coroscope hold the target from a thread of its
own.

Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import platform
import sys
import threading
import time

counts = {"main": 0, "worker": 0}


def work():
    while True:
        counts["worker"] += 1
        time.sleep(0.02)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def main():
    ready_path, counter_path = sys.argv[1], sys.argv[2]
    worker = threading.Thread(target=work, name="worker")
    worker.daemon = True
    worker.start()
    never = threading.Event()
    for i in range(int(sys.argv[3]) if len(sys.argv) > 3 else 0):
        idle = threading.Thread(target=never.wait, name="idle-%d" % i)
        idle.daemon = True
        idle.start()
    last_write = 0.0
    announced = False
    while True:
        counts["main"] += 1
        now = time.time()
        if now - last_write >= 0.05:
            write_atomically(counter_path, "%d %d\n" % (counts["main"],
                                                        counts["worker"]))
            last_write = now
            if not announced:
                write_atomically(ready_path, json.dumps({
                    "pid": os.getpid(),
                    "version": platform.python_version(),
                    "executable": sys.executable,
                }))
                announced = True
        time.sleep(0.02)


main()
