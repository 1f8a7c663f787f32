"""Benchmark target: one thread, a small stack, a small heap.

Usage: small.py READY_FILE

What remains of coroscope's time here is its fixed cost: starting,
loading the target's symbols, attaching and detaching.  It is also the
target for gdb's py-bt, which only shows thread stacks.
"""

import sys
import time

from _ready import announce


def wait_for_work(ready):
    announce(ready)
    while True:
        time.sleep(3600)


def serve(ready):
    wait_for_work(ready)


def main(ready):
    serve(ready)


if __name__ == "__main__":
    main(sys.argv[1])
