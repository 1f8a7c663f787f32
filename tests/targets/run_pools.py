"""A pool's job that never ends, the program waiting for its result.

Usage: run_pools.py MODE

- map: concurrent.futures' ProcessPoolExecutor.map(), one job asleep
  for an hour: the main thread waits for its result through map's
  generators (_chain_from_iterable_of_lists, in process.py).
- thread-map: ThreadPoolExecutor.map(), one job polling for a flag
  that never comes (time.sleep(0.5) in a loop): the worker runs between
  samples.
- lost: a multiprocessing.Pool whose worker dies running a job (as an
  OOM kill does): the pool starts another worker, the job is lost, and
  map() waits for its result for ever.
Runs on 3.6+.
"""

import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor


def sleeps(x):
    if x == 2:
        time.sleep(3600)  # MARK: pool-map-job
    return x


def polls(x):
    if x == 2:
        while True:
            time.sleep(0.5)  # MARK: pool-thread-polls
    return x


def dies(x):
    if x == 3:
        os._exit(1)  # MARK: pool-lost-dies
    return x


if __name__ == "__main__":
    if sys.argv[1] == "map":
        with ProcessPoolExecutor(2) as ex:
            for r in ex.map(sleeps, range(4)):  # MARK: pool-map-wait
                print(r, flush=True)
    elif sys.argv[1] == "thread-map":
        with ThreadPoolExecutor(2) as ex:
            for r in ex.map(polls, range(4)):  # MARK: pool-thread-wait
                print(r, flush=True)
    else:
        with multiprocessing.Pool(2) as pool:
            print(pool.map(dies, range(8)))  # MARK: pool-lost-wait
