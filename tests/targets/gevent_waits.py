"""A target for the wait-for graph over gevent's greenlets and primitives.

Usage: gevent_waits.py READY_FILE [pure]

With pure, gevent runs as Python code (PURE_PYTHON=1): its classes are
Python classes, not the compiled ones whose fields coroscope knows.

Greenlets, each named by gevent's name:
  holder        holds an RLock and a Semaphore (`with`), then waits on
                an Event nothing sets (with a callback linked besides),
                from a function of its own
  lock-waiter   waits for the RLock (`with`)
  sem-waiter    waits for the Semaphore (`with`)
  getter        waits in Queue.get() on an empty queue
  putter        waits in put() on a full Queue(1)
  joinable      waits in get() on an empty JoinableQueue
  task-joiner   waits in join() on a JoinableQueue with an item left
                and two unfinished
  pq-putter     waits in put() on a full PriorityQueue(1) (its items a
                list, a heap)
  unbound       waits in get() on an empty UnboundQueue
  ch-getter     waits in get() on a Channel
  ch-putter     waits in put() on another Channel (its offer a tuple)
  result        waits in AsyncResult.get()
  one, two      each holds one of two RLocks and waits for the other's
  joiner        waits in one.join()
and the main greenlet waits in joinall() of them all.  Besides:
  leaker        ended holding an RLock (acquired twice, never released)
  lwaiter       waits for that RLock
  later         spawned to start in an hour: not started
  j-later       waits in later.join()
  napper        in gevent.sleep(3600): its timer keeps the hub from
                LoopExit, and nothing wakes before it
Once all are parked it writes READY_FILE (JSON: pid, the greenlets' and
objects' addresses by name) atomically.  Lines tests look for carry
"# MARK: name".

Needs gevent (Debian's python3-gevent on /usr/bin/python3.11).
"""

import json
import os
import sys

if sys.argv[2:3] == ["pure"]:
    os.environ["PURE_PYTHON"] = "1"

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import gevent.lock  # noqa: E402
import gevent.queue  # noqa: E402


def park(ev):
    ev.wait()  # MARK: holder-park


def holder(rlock, sem, ev):
    with rlock:  # MARK: holder-rlock
        with sem:  # MARK: holder-sem
            park(ev)  # MARK: holder-call


def lock_waiter(rlock):
    with rlock:  # MARK: lock-wait
        pass


def sem_waiter(sem):
    with sem:  # MARK: sem-wait
        pass


def getter(q):
    q.get()  # MARK: get


def putter(q):
    q.put(2)  # MARK: put


def task_joiner(q):
    q.join()  # MARK: task-join


def result(ar):
    ar.get()  # MARK: result


def crossed(first, second):
    with first:  # MARK: crossed-first
        gevent.sleep(0.05)
        with second:  # MARK: crossed-second
            pass


def joiner(other):
    other.join()  # MARK: join


def leaker(rlock):
    rlock.acquire()
    rlock.acquire()


def lwaiter(rlock):
    rlock.acquire()  # MARK: lwaiter


def napper():
    gevent.sleep(3600)


def main(ready):
    rlock, sem = gevent.lock.RLock(), gevent.lock.Semaphore(1)
    ev, ar = gevent.event.Event(), gevent.event.AsyncResult()
    # a callback on the Event, no greenlet's switch: no waiter
    ev.rawlink(len)
    empty, full = gevent.queue.Queue(), gevent.queue.Queue(1)
    full.put(1)
    joinq, tasks = gevent.queue.JoinableQueue(), gevent.queue.JoinableQueue()
    pq, uq = gevent.queue.PriorityQueue(1), gevent.queue.UnboundQueue()
    pq.put((1, "a"))
    ch1, ch2 = gevent.queue.Channel(), gevent.queue.Channel()
    tasks.put("a")
    tasks.put("b")
    tasks.get()
    a, b = gevent.lock.RLock(), gevent.lock.RLock()
    spawned = [
        ("napper", gevent.spawn(napper)),
        ("holder", gevent.spawn(holder, rlock, sem, ev)),
    ]
    gevent.sleep(0.05)  # the holder holds both before the others ask
    spawned += [
        ("lock-waiter", gevent.spawn(lock_waiter, rlock)),
        ("sem-waiter", gevent.spawn(sem_waiter, sem)),
        ("getter", gevent.spawn(getter, empty)),
        ("putter", gevent.spawn(putter, full)),
        ("joinable", gevent.spawn(getter, joinq)),
        ("task-joiner", gevent.spawn(task_joiner, tasks)),
        ("pq-putter", gevent.spawn(pq.put, (2, "b"))),
        ("unbound", gevent.spawn(getter, uq)),
        ("ch-getter", gevent.spawn(getter, ch1)),
        ("ch-putter", gevent.spawn(putter, ch2)),
        ("result", gevent.spawn(result, ar)),
        ("one", gevent.spawn(crossed, a, b)),
        ("two", gevent.spawn(crossed, b, a)),
    ]
    spawned.append(("joiner", gevent.spawn(joiner, spawned[-2][1])))
    leaked = gevent.lock.RLock()
    later = gevent.spawn_later(3600, napper)
    more = [("leaker", gevent.spawn(leaker, leaked)), ("later", later)]
    gevent.sleep(0.05)  # the leaker has ended
    more += [("lwaiter", gevent.spawn(lwaiter, leaked)),
             ("j-later", gevent.spawn(joiner, later))]
    for name, g in spawned + more:
        g.name = name
    gevent.sleep(0.3)
    record = {"pid": os.getpid(),
              "greenlets": {name: id(g) for name, g in spawned + more},
              "joined": [name for name, _ in spawned],
              "objects": {"rlock": id(rlock), "sem": id(sem), "ev": id(ev),
                          "ar": id(ar), "empty": id(empty),
                          "full": id(full), "joinq": id(joinq),
                          "tasks": id(tasks), "pq": id(pq), "uq": id(uq),
                          "ch1": id(ch1), "ch2": id(ch2),
                          "a": id(a), "b": id(b), "leaked": id(leaked)}}
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)
    gevent.joinall([g for _, g in spawned])  # MARK: joinall


if __name__ == "__main__":
    main(sys.argv[1])
