"""A target whose heap and threads never stand still, for tools/soak.

Usage: mutating_target.py READY_FILE COUNTER_FILE

Eight worker threads loop forever creating and dropping what coroscope
reads: suspended generators, coroutines and async generators, dicts and
lists, short-lived event loops with tasks, recursion of varying depth
holding generators at every level, short-lived threads, and new thread
names.  The main thread runs an asyncio loop whose tasks are created,
named, awaited, gathered and cancelled without pause.

Each worker and the loop count their rounds; a heartbeat thread rewrites
COUNTER_FILE atomically every 20 ms with all the counts ("HEARTBEAT LOOP
W0 ... W7").  A reader that sees every number grow knows every thread is
running: none left stopped or traced.  READY_FILE is written once all
threads have counted at least once.

Must run unchanged on CPython 3.6 through 3.14 (and free-threaded 3.14t).
"""

import asyncio
import os
import random
import sys
import threading
import time

NWORKERS = 8
counts = [0] * (NWORKERS + 2)      # heartbeat, loop, workers
HEARTBEAT, LOOP = 0, 1


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def numbers(n):
    for i in range(n):
        yield i


def relay(n):
    yield from numbers(n)


async def sleeper(delay):
    await asyncio.sleep(delay)
    return delay


async def chain(depth, delay):
    if depth <= 0:
        return await sleeper(delay)
    return await chain(depth - 1, delay)


async def agen(n):
    for i in range(n):
        yield i
        await asyncio.sleep(0)


def recurse(depth, held):
    """Recurse `depth` levels, leaving a suspended generator at each."""
    g = relay(depth + 2)
    next(g)
    held.append(g)
    if depth > 0:
        return recurse(depth - 1, held) + 1
    return 0


def short_loop(rng):
    """A whole event loop with a few tasks, created and closed."""
    loop = asyncio.new_event_loop()
    try:
        tasks = [loop.create_task(chain(rng.randint(0, 5), 0.0005 * i))
                 for i in range(rng.randint(1, 6))]
        loop.run_until_complete(asyncio.gather(*tasks))
    finally:
        loop.close()


def churn_objects(rng, keep):
    gens = [relay(rng.randint(1, 50)) for _ in range(rng.randint(1, 20))]
    for g in gens[::2]:
        next(g)                        # some suspended, some not started
    coro = chain(rng.randint(0, 3), 0)
    ag = agen(3)
    d = {("k%d" % i): [i] * (i % 7) for i in range(rng.randint(0, 200))}
    lst = [d, gens, [coro, ag]] * rng.randint(1, 5)
    keep.append((gens, d, lst, coro, ag))
    if len(keep) > 8:
        old = keep.pop(rng.randrange(len(keep)))
        old[3].close()                 # never awaited: no warning
    for i in range(rng.randint(0, 50)):
        d["x%d" % i] = i               # resize while it is being read
    d.clear()


def worker(index):
    rng = random.Random(index)
    keep = []
    me = threading.current_thread()
    slot = LOOP + 1 + index
    while True:
        churn_objects(rng, keep)
        held = []
        recurse(rng.randint(0, 60), held)
        del held
        if rng.random() < 0.2:
            short_loop(rng)
        if index == NWORKERS - 1 and rng.random() < 0.3:
            t = threading.Thread(target=time.sleep, args=(0.001,),
                                 name="brief-%d" % counts[slot])
            t.start()
            t.join()
        me.name = "worker-%d-%d" % (index, counts[slot] % 1000)
        counts[slot] += 1
        time.sleep(0.001)


async def churn_tasks():
    loop = asyncio.get_event_loop()
    rng = random.Random(99)
    live = []
    while True:
        for _ in range(rng.randint(1, 10)):
            t = loop.create_task(chain(rng.randint(0, 8), rng.random() / 50))
            if hasattr(t, "set_name"):
                t.set_name("churn-%d" % counts[LOOP])
            live.append(t)
        if live and rng.random() < 0.3:
            live.pop(rng.randrange(len(live))).cancel()
        done = [t for t in live if t.done()]
        live = [t for t in live if not t.done()]
        for t in done:
            if not t.cancelled():
                t.result()
        if rng.random() < 0.2:
            await asyncio.gather(*[chain(2, 0.001) for _ in range(5)])
        async for _ in agen(2):
            pass
        counts[LOOP] += 1
        await asyncio.sleep(0.002)


def heartbeat(counter_path, ready_path):
    announced = False
    while True:
        counts[HEARTBEAT] += 1
        write_atomically(counter_path, " ".join(map(str, counts)) + "\n")
        if not announced and all(counts):
            write_atomically(ready_path, "%d\n" % os.getpid())
            announced = True
        time.sleep(0.02)


def main():
    ready_path, counter_path = sys.argv[1], sys.argv[2]
    for i in range(NWORKERS):
        t = threading.Thread(target=worker, args=(i,), name="worker-%d" % i)
        t.daemon = True
        t.start()
    t = threading.Thread(target=heartbeat, args=(counter_path, ready_path),
                         name="heartbeat")
    t.daemon = True
    t.start()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(churn_tasks())


if __name__ == "__main__":
    main()
