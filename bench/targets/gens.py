"""Benchmark target: COUNT plain generators, each suspended at a yield.

Usage: gens.py READY_FILE COUNT

No asyncio: the generators are held in a list and the main thread then
sleeps, so the cost measured is the heap walk and the reading of COUNT
generator frames.
"""

import sys
import time

from _ready import announce


def numbers(i):
    yield i
    yield i + 1


def main(ready, count):
    gens = [numbers(i) for i in range(count)]
    for g in gens:
        next(g)
    announce(ready, generators=len(gens))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
