"""Waits and holds for the wait-for graph (tests/test_graph.py).

Usage: graph_target.py READY SCENARIO

Scenarios:
  alock       a task holds an asyncio.Lock (async with) while parked on a
              future; two tasks wait for the lock
  threads     two threads deadlocked on two threading.Locks (with), two
              more on two RLocks (each entered 3 times), and a thread
              waiting for a lock taken with a bare acquire(); two pairs
              (Lock, RLock) deadlocked each holding one in a `with` and
              waiting in a bare second.acquire(); and a thread asleep
              after an acquire() that returned, deeper in its stack;
              one asleep in a `with` after a Condition's acquire() and
              release(), while another holds the Condition's lock and
              waits for the first's (a leftover of the call in the
              sleeper's stack must not make a cycle); one asleep holding
              a Condition's RLock it took with acquire(); and a pair
              deadlocked through a Condition, one in `with cond:`
              waiting for a lock, the other holding it and waiting in
              cond.acquire() (which is the Condition's lock's); and
              one blocked in other.acquire() while a held RLock's bound
              acquire is a value lower in its stack; one entering a held
              Lock through contextlib.ExitStack.enter_context()
  prims       a task waiting on each asyncio primitive and a thread on
              each threading one; and on subclasses: asyncio's and
              queue's PriorityQueue and LifoQueue, a Queue and an Event
              of the script's own, each also after a mixin; a task
              notified by a Condition's holder, waiting for its lock
  to_thread   a task awaiting run_in_executor(f) where f blocks on a lock
              held by another thread
  first_of    tasks each holding an asyncio.Lock while in asyncio.wait()
              of two children, one child waiting for that lock, the
              other on an Event: "first-holder" with FIRST_COMPLETED (no
              deadlock: the Event may end its wait), "all-holder" with
              ALL_COMPLETED (a deadlock); "both-holder" FIRST_COMPLETED
              with both children waiting for its lock (a deadlock);
              "cyc-w" in FIRST_COMPLETED of a child awaiting it and one
              on an Event (no await cycle), "cyc2-w" of two awaiting it
              (an await cycle); "fut-holder" FIRST_COMPLETED of a child
              on its lock and of a plain future (no deadlock); on 3.11+
              "tg-holder" with a TaskGroup's
              child beside the FIRST_COMPLETED wait of one task on its
              lock (a deadlock)

Writes {"pid": ..., "names": {...}} to READY once everything waits (for
prims also "classes": each subclass's waiter's name -> what the
interpreter calls the class), then waits forever.  Runs on CPython 3.6 through 3.14.
"""

import asyncio
import contextlib
import json
import os
import queue
import sys
import threading
import time

from _ready import class_name

READY, SCENARIO = sys.argv[1], sys.argv[2]
ready_info = {}


def ready():
    ready_info["pid"] = os.getpid()
    with open(READY + ".tmp", "w") as f:
        json.dump(ready_info, f)
    os.rename(READY + ".tmp", READY)


def spawn(loop, coro, name):
    task = loop.create_task(coro)
    if hasattr(task, "set_name"):
        task.set_name(name)
    return task


# ---- alock ----------------------------------------------------------------

async def holder(lock, fut):
    async with lock:  # MARK: holder-takes
        await fut  # MARK: holder-parked


async def waiter(lock):
    async with lock:  # MARK: waiter
        pass


async def alock_main():
    loop = asyncio.get_event_loop()
    lock = asyncio.Lock()
    fut = loop.create_future()
    tasks = [spawn(loop, holder(lock, fut), "holder")]
    await asyncio.sleep(0.05)
    tasks.append(spawn(loop, waiter(lock), "waiter-1"))
    tasks.append(spawn(loop, waiter(lock), "waiter-2"))
    await asyncio.sleep(0.1)
    ready()
    await asyncio.gather(*tasks)


# ---- threads --------------------------------------------------------------

def crossed(first, second, barrier, depth):
    with first:  # MARK: crossed-takes
        for _ in range(depth - 1):
            first.acquire()     # an RLock: entered `depth` times
        barrier.wait()
        with second:  # MARK: crossed-blocked
            pass


def crossed_acquire(first, second, barrier):
    with first:  # MARK: acquire-takes
        barrier.wait()
        second.acquire()  # MARK: acquire-blocked
        second.release()


def acquired_sleeps(lock):
    # The lock stays in the value stack above the sleep's slots (the
    # call's result is stored over its method): an acquire() that
    # returned waits for nothing.
    got = [0, 0, 0, lock.acquire(True, 5)]
    time.sleep(3600)  # MARK: acquired-sleeps
    return got


def stale_then_sleeps(mine, cond, barrier):
    with mine:
        # cond.acquire is its lock's, bound: up to 3.12 called with a
        # NULL below it, over which the result goes; it stays above,
        # here above the slots of the calls that follow.
        got = [0, 0, cond.acquire()]
        cond.release()
        barrier.wait()
        time.sleep(3600)  # MARK: stale-sleeps
    return got


def takes_theirs(theirs, cond_lock, barrier):
    barrier.wait()
    with cond_lock:
        with theirs:  # MARK: takes-theirs
            pass


def cond_then_lock(cond, lock, barrier):
    with cond:  # MARK: cond-takes
        barrier.wait()
        lock.acquire()  # MARK: cond-then-lock


def lock_then_cond(cond, lock, barrier):
    with lock:
        barrier.wait()
        cond.acquire()  # MARK: lock-then-cond


def acquire_beside_value(value, other):
    pair = (value.acquire, other.acquire())  # MARK: beside-value
    return pair


def exit_stack_enters(lock):
    with contextlib.ExitStack() as stack:
        stack.enter_context(lock)  # MARK: exit-stack


def rlock_sleeps():
    cond = threading.Condition()
    cond.acquire()
    time.sleep(3600)  # MARK: rlock-sleeps


def bare_holder(lock, started):
    lock.acquire()
    started.set()
    time.sleep(3600)


def bare_waiter(lock):
    with lock:  # MARK: bare-waiter
        pass


def start_threads():
    threads = []
    for kind, name, depth in ((threading.Lock, "lock", 1),
                              (threading.RLock, "rlock", 3)):
        a, b = kind(), kind()
        barrier = threading.Barrier(2)
        threads.append(threading.Thread(target=crossed,
                                        args=(a, b, barrier, depth),
                                        name=name + "-ab", daemon=True))
        threads.append(threading.Thread(target=crossed,
                                        args=(b, a, barrier, depth),
                                        name=name + "-ba", daemon=True))
        a, b = kind(), kind()
        barrier = threading.Barrier(2)
        for pair, first, second in (("-ab", a, b), ("-ba", b, a)):
            threads.append(threading.Thread(
                target=crossed_acquire, args=(first, second, barrier),
                name="acq-" + name + pair, daemon=True))
    threads.append(threading.Thread(target=acquired_sleeps,
                                    args=(threading.Lock(),),
                                    name="acquired-sleeps", daemon=True))
    mine, cond_lock, barrier = threading.Lock(), threading.Lock(), \
        threading.Barrier(2)
    threads.append(threading.Thread(
        target=stale_then_sleeps,
        args=(mine, threading.Condition(cond_lock), barrier),
        name="stale-sleeps", daemon=True))
    threads.append(threading.Thread(target=takes_theirs,
                                    args=(mine, cond_lock, barrier),
                                    name="takes-theirs", daemon=True))
    threads.append(threading.Thread(target=rlock_sleeps,
                                    name="rlock-sleeps", daemon=True))
    value, other = threading.RLock(), threading.Lock()
    value.acquire()
    other.acquire()
    threads.append(threading.Thread(target=acquire_beside_value,
                                    args=(value, other),
                                    name="beside-value", daemon=True))
    threads.append(threading.Thread(target=exit_stack_enters,
                                    args=(other,),
                                    name="exit-stack", daemon=True))
    cond, lock, barrier = threading.Condition(threading.Lock()), \
        threading.Lock(), threading.Barrier(2)
    for fn, name in ((cond_then_lock, "cond-then-lock"),
                     (lock_then_cond, "lock-then-cond")):
        threads.append(threading.Thread(target=fn,
                                        args=(cond, lock, barrier),
                                        name=name, daemon=True))
    bare = threading.Lock()
    started = threading.Event()
    threads.append(threading.Thread(target=bare_holder, args=(bare, started),
                                    name="bare-holder", daemon=True))
    for t in threads:
        t.start()
    started.wait()
    waiter_thread = threading.Thread(target=bare_waiter, args=(bare,),
                                     name="bare-waiter", daemon=True)
    waiter_thread.start()
    time.sleep(0.3)


# ---- prims ----------------------------------------------------------------

async def wait_event(ev):
    await ev.wait()  # MARK: a-event


async def wait_sem(sem):
    async with sem:  # MARK: a-sem
        pass


async def wait_get(q):
    await q.get()  # MARK: a-get


async def wait_own_queue(q):
    await q.get()  # MARK: a-own-queue


async def wait_put(q):
    await q.put(2)  # MARK: a-put


async def wait_cond(cond):
    async with cond:
        await cond.wait()  # MARK: a-cond


async def wait_notified(cond):
    async with cond:
        await cond.wait()  # MARK: a-cond-notified


async def notify_and_hold(cond, notified):
    await notified.wait()
    async with cond:
        cond.notify()
        await asyncio.sleep(3600)  # MARK: a-cond-holder


async def wait_barrier(barrier):
    await barrier.wait()  # MARK: a-barrier


def t_event(ev):
    ev.wait()  # MARK: t-event


def t_sem(sem):
    sem.acquire()  # MARK: t-sem


def t_get(q):
    q.get()  # MARK: t-get


def t_put(q):
    q.put(2)  # MARK: t-put


def t_cond(cond):
    with cond:
        cond.wait()  # MARK: t-cond


def t_barrier(barrier):
    barrier.wait()  # MARK: t-barrier


class OwnQueue(asyncio.Queue):
    pass


class OwnEvent(threading.Event):
    pass


class Mixin(object):
    """What a class may list before the library's: then that class is
    in its MRO but not its __base__."""


class MixedQueue(Mixin, asyncio.Queue):
    pass


class MixedEvent(Mixin, threading.Event):
    pass


async def prims_main():
    loop = asyncio.get_event_loop()
    subs = [(asyncio.PriorityQueue(), "a-prio"),
            (asyncio.LifoQueue(), "a-lifo"), (OwnQueue(), "a-own"),
            (MixedQueue(), "a-mixed")]
    ready_info["classes"] = dict((name, class_name(q, asyncio))
                                 for q, name in subs)
    subtasks = [spawn(loop, wait_get(q), name) for q, name in subs]
    # alike tasks on two queues of one class
    subtasks += [spawn(loop, wait_own_queue(asyncio.Queue()), name)
                 for name in ("a-q1", "a-q2")]
    for fn, arg, name in ((t_get, queue.PriorityQueue(), "t_prio"),
                          (t_get, queue.LifoQueue(), "t_lifo"),
                          (t_event, OwnEvent(), "t_own"),
                          (t_event, MixedEvent(), "t_mixed")):
        ready_info["classes"][name] = class_name(
            arg, queue if fn is t_get else threading)
        threading.Thread(target=fn, args=(arg,), name=name,
                         daemon=True).start()
    full = asyncio.Queue(maxsize=1)
    full.put_nowait(1)
    tasks = [
        spawn(loop, wait_event(asyncio.Event()), "a-event"),
        spawn(loop, wait_sem(asyncio.Semaphore(0)), "a-sem"),
        spawn(loop, wait_get(asyncio.Queue()), "a-get"),
        spawn(loop, wait_put(full), "a-put"),
        spawn(loop, wait_cond(asyncio.Condition()), "a-cond"),
    ]
    # notified, and waiting for the lock its notifier holds
    cond, waiting = asyncio.Condition(), asyncio.Event()
    tasks.append(spawn(loop, wait_notified(cond), "a-cond-notified"))
    await asyncio.sleep(0)
    waiting.set()
    tasks.append(spawn(loop, notify_and_hold(cond, waiting),
                       "a-cond-holder"))
    if hasattr(asyncio, "Barrier"):
        tasks.append(spawn(loop, wait_barrier(asyncio.Barrier(2)),
                           "a-barrier"))
    tfull = queue.Queue(maxsize=1)
    tfull.put(1)
    for fn, arg in ((t_event, threading.Event()),
                    (t_sem, threading.Semaphore(0)),
                    (t_get, queue.Queue()), (t_put, tfull),
                    (t_cond, threading.Condition()),
                    (t_barrier, threading.Barrier(2))):
        threading.Thread(target=fn, args=(arg,), name=fn.__name__,
                         daemon=True).start()
    await asyncio.sleep(0.3)
    ready()
    await asyncio.gather(*(tasks + subtasks))


# ---- first_of -------------------------------------------------------------

async def take(lock):
    async with lock:  # MARK: take-waits
        pass


async def holds_and_waits(loop, name, return_when, both=False):
    lock = asyncio.Lock()
    async with lock:
        kids = [spawn(loop, take(lock), name + "-take"),
                spawn(loop, take(lock) if both else
                      wait_event(asyncio.Event()), name + "-other")]
        await asyncio.wait(kids, return_when=return_when)  # MARK: holder-waits


async def holds_and_waits_future(loop):
    """FIRST_COMPLETED of a task on the lock held here and of a plain
    future (no task, no node): the future may end the wait."""
    lock = asyncio.Lock()
    async with lock:
        kid = spawn(loop, take(lock), "fut-take")
        await asyncio.wait([kid, loop.create_future()],
                           return_when=asyncio.FIRST_COMPLETED)


async def sleeps():
    await asyncio.sleep(3600)


async def group_and_waits(loop):
    """A TaskGroup's child beside asyncio.wait(FIRST_COMPLETED) of one
    task that waits for the lock held here: the child is no choice."""
    lock = asyncio.Lock()
    async with lock:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(sleeps(), name="tg-sleeper")
            kid = spawn(loop, take(lock), "tg-take")
            await asyncio.wait([kid], return_when=asyncio.FIRST_COMPLETED)  # MARK: tg-waits


async def awaits(box):
    await box["w"]  # MARK: awaits-waiter


async def awaited_first(loop, box, name, both):
    kids = [spawn(loop, awaits(box), name + "-a"),
            spawn(loop, awaits(box) if both else
                  wait_event(asyncio.Event()), name + "-b")]
    await asyncio.wait(kids, return_when=asyncio.FIRST_COMPLETED)


async def first_of_main():
    loop = asyncio.get_event_loop()
    tasks = [spawn(loop, holds_and_waits(loop, "first",
                                         asyncio.FIRST_COMPLETED),
                   "first-holder"),
             spawn(loop, holds_and_waits(loop, "all",
                                         asyncio.ALL_COMPLETED),
                   "all-holder"),
             spawn(loop, holds_and_waits(loop, "both",
                                         asyncio.FIRST_COMPLETED, True),
                   "both-holder")]
    tasks.append(spawn(loop, holds_and_waits_future(loop), "fut-holder"))
    for name, both in (("cyc", False), ("cyc2", True)):
        box = {}
        box["w"] = spawn(loop, awaited_first(loop, box, name, both),
                         name + "-w")
        tasks.append(box["w"])
    if hasattr(asyncio, "TaskGroup"):
        tasks.append(spawn(loop, group_and_waits(loop), "tg-holder"))
    await asyncio.sleep(0.3)
    ready()
    await asyncio.gather(*tasks)


# ---- to_thread ------------------------------------------------------------

def blocked_work(lock):
    with lock:  # MARK: work-blocked
        pass


async def offload(lock):
    loop = asyncio.get_event_loop()
    await loop.run_in_executor(None, blocked_work, lock)  # MARK: offload


async def to_thread_main(lock):
    loop = asyncio.get_event_loop()
    task = spawn(loop, offload(lock), "offload")
    await asyncio.sleep(0.3)
    ready()
    await task


def lock_keeper(lock, started):
    with lock:
        started.set()
        time.sleep(3600)  # MARK: keeper


def main():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    if SCENARIO == "alock":
        loop.run_until_complete(alock_main())
    elif SCENARIO == "threads":
        start_threads()
        ready()
        time.sleep(3600)
    elif SCENARIO == "prims":
        loop.run_until_complete(prims_main())
    elif SCENARIO == "first_of":
        loop.run_until_complete(first_of_main())
    elif SCENARIO == "to_thread":
        lock = threading.Lock()
        started = threading.Event()
        threading.Thread(target=lock_keeper, args=(lock, started),
                         name="keeper", daemon=True).start()
        started.wait()
        loop.run_until_complete(to_thread_main(lock))


main()
