"""Threads blocked acquiring multiprocessing locks, each held by someone
else: another process of the tree, a process gone, the thread itself,
another thread; and a deadlock between this process and its child.

Usage: mp_locks.py READY_FILE

Each thread named after its case waits on a lock of its own:
- "forked": `with lock:` on a multiprocessing.Lock that a child of the
  "fork" method acquired (the child's copy at the same address);
- "spawned": acquire() of an RLock that a child of the "spawn" method
  acquired (its copy at an address of its own);
- "killed": `with lock:` on a Lock whose holder, a forked child, was
  killed holding it: no process holds it now;
- "itself": a second acquire() of a Lock it holds (not reentrant);
- "timed": acquire(timeout=3600) of a Lock that thread "keeper" of this
  process holds in a `with` block;
- "event": wait() on a multiprocessing.Event never set, and "full":
  put() on a full multiprocessing.Queue (its BoundedSemaphore): no
  lock's waits, no holders;
- "MainThread": holds lock F, then waits for lock G, which a forked
  child holds while it waits for F;
- a process pool's worker killed while it waited for a task, holding
  the task queue's read lock: the worker that replaces it waits for that
  lock for good ("pool_worker" in the ready file, its pid).

READY_FILE gets, as JSON, "pid", "tids" by thread name, "locks" (each
case's lock's address, id(); "pool": the task queue's), "holders" (the
child holding each case's lock, by pid), "keeper" (the keeper's tid)
and "pool_worker".  The children end when
this process does.
"""

import multiprocessing
import os
import signal
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid


def hold(lock, ready, also=None):
    lock.acquire()
    ready.set()
    if also is not None:
        also.acquire()  # MARK: child-deadlock
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.05)  # MARK: hold


def child_holds(ctx, lock, also=None):
    ready = ctx.Event()
    p = ctx.Process(target=hold, args=(lock, ready, also), daemon=True)
    p.start()
    if not ready.wait(60):
        sys.exit("child %d never held its lock" % p.pid)
    return p


def lost_pool_lock(ctx):
    """A pool of one worker, killed once it holds its task queue's read
    lock (waiting for a task); the pool and its new worker's pid."""
    pool = ctx.Pool(1)
    rlock = pool._inqueue._rlock
    deadline = time.time() + 60
    while rlock._semlock._get_value() != 0 and time.time() < deadline:
        time.sleep(0.01)
    first = pool._pool[0].pid
    os.kill(first, signal.SIGKILL)
    while time.time() < deadline:
        # (3.6 lists the new worker before start() gives it a pid)
        pids = [p.pid for p in pool._pool if p.pid and p.pid != first]
        if pids:
            return pool, pids[0]
        time.sleep(0.01)
    sys.exit("the pool never replaced its worker")


def main():
    ready = sys.argv[1]
    fork = multiprocessing.get_context("fork")
    spawn = multiprocessing.get_context("spawn")
    locks = {"forked": fork.Lock(), "spawned": spawn.RLock(),
             "killed": fork.Lock(), "itself": fork.Lock(),
             "timed": fork.Lock(), "MainThread": fork.Lock()}
    mine = fork.Lock()
    holders = {}
    for case, ctx in (("forked", fork), ("spawned", spawn)):
        holders[case] = child_holds(ctx, locks[case]).pid
    victim = child_holds(fork, locks["killed"])
    os.kill(victim.pid, signal.SIGKILL)  # (Process.kill(): 3.7+)
    victim.join()
    pool, pool_worker = lost_pool_lock(fork)
    tids, keeper = {}, {}

    def keep():
        keeper["tid"] = native_tid()
        with locks["timed"]:  # MARK: keep-with
            time.sleep(3600)  # MARK: keep

    def wait(case):
        tids[case] = native_tid()
        lock = locks.get(case)
        if case == "forked":
            with lock:  # MARK: wait-forked
                pass
        elif case == "spawned":
            lock.acquire()  # MARK: wait-spawned
        elif case == "killed":
            with lock:  # MARK: wait-killed
                pass
        elif case == "itself":
            lock.acquire()
            lock.acquire()  # MARK: wait-itself
        elif case == "event":
            never.wait()  # MARK: wait-event
        elif case == "full":
            full.put(1)
            full.put(2)  # MARK: wait-full
        elif case == "timed":
            while "tid" not in keeper:
                time.sleep(0.01)
            time.sleep(0.2)
            lock.acquire(timeout=3600)  # MARK: wait-timed

    threading.Thread(target=keep, name="keeper", daemon=True).start()
    never, full = fork.Event(), fork.Queue(1)
    for case in ("forked", "spawned", "killed", "itself", "timed",
                 "event", "full"):
        threading.Thread(target=wait, args=(case,), name=case,
                         daemon=True).start()
    mine.acquire()
    holders["MainThread"] = child_holds(fork, locks["MainThread"],
                                        mine).pid
    while len(tids) < 7:
        time.sleep(0.01)
    time.sleep(0.5)
    tids["MainThread"] = native_tid()
    write_ready(ready, {"pid": os.getpid(), "tids": tids,
                        "locks": dict([(k, id(v)) for k, v in locks.items()] +
                                      [("pool", id(pool._inqueue._rlock))]),
                        "pool_worker": pool_worker,
                        "mine": id(mine), "holders": holders,
                        "keeper": keeper["tid"]})
    with locks["MainThread"]:  # MARK: main-deadlock
        pass


if __name__ == "__main__":
    main()
