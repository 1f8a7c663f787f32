"""Benchmark target: COUNT threads, all blocked.

Usage: threads.py READY_FILE COUNT

Each thread waits on an event that is never set, so the stop has COUNT
threads to interrupt and wait for: the pause it costs is the figure.
"""

import sys
import threading

from _ready import announce


def main(ready, count):
    never = threading.Event()
    threading.stack_size(256 * 1024)
    threads = [threading.Thread(target=never.wait, daemon=True)
               for _ in range(count)]
    for t in threads:
        t.start()
    announce(ready, threads=count + 1)
    never.wait()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
