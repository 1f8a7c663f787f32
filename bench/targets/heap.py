"""Benchmark target: a large heap of COUNT unrelated GC-tracked objects.

Usage: heap.py READY_FILE COUNT

Half empty lists, half instances of a small class: objects the GC tracks
but that are neither tasks nor generators, so coroscope must walk past
all of them to find the few that matter.  The GC walk's rate in objects
per second comes from this target.
"""

import sys
import time

from _ready import announce


class Node(object):
    __slots__ = ("a", "b")

    def __init__(self, i):
        self.a = i
        self.b = None


def main(ready, count):
    objs = []
    for i in range(count // 2):
        objs.append([])
        objs.append(Node(i))
    announce(ready, objects=len(objs))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
