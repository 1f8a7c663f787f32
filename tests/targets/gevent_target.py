"""A target for coroscope's greenlet tests: gevent greenlets parked in
known places, and a raw greenlet switched away from mid-function.

Usage: gevent_target.py READY_FILE

Greenlets park in Event.wait, Semaphore.acquire, Queue.get and
gevent.sleep (several alike, so output groups them), a raw
greenlet.greenlet switches back to its parent from inside a nested call,
and the main greenlet waits in joinall() under main().  Once all are
parked a reporter greenlet records what the process itself knows of each
greenlet -- gr_frame's chain (file, line, function, innermost first), the
gevent name, whether it is the main greenlet -- and writes it to
READY_FILE as JSON (atomically); then it returns, and only the hub runs.

Needs greenlet and gevent (Debian's python3-gevent on /usr/bin/python3.11).
"""

import json
import os
import sys
import threading
import time

import gevent
import gevent.event
import gevent.lock
import gevent.queue
import greenlet

from gr_frames import frames_of

N_SLEEPERS = 3


def wait_event(ev):
    ev.wait()  # MARK: event-wait


def take_semaphore(sem):
    sem.acquire()  # MARK: semaphore


def get_item(q):
    return q.get()  # MARK: queue-get


def nap():
    gevent.sleep(3600)  # MARK: sleep


def idle():
    gevent.sleep(3600)  # MARK: idle


def raw_inner():
    greenlet.getcurrent().parent.switch()  # MARK: raw-switch


def raw_outer():
    raw_inner()  # MARK: raw-outer


def thread_inner():
    greenlet.getcurrent().parent.switch()  # MARK: thread-switch


def thread_body(box, started):
    """A real thread with a raw greenlet of its own, switched away from."""
    g = greenlet.greenlet(thread_inner)
    g.switch()
    box["greenlet"] = g
    box["frames"] = frames_of(g)
    box["tid"] = threading.get_native_id()
    started.set()
    time.sleep(3600)  # MARK: thread-sleep


def reporter(ready, everyone, main_gr, raw, box):
    gevent.sleep(0.2)  # every other greenlet is parked by now
    record = {"pid": os.getpid(), "greenlets": []}
    for g, name in everyone:
        record["greenlets"].append({"id": id(g), "name": name,
                                    "frames": frames_of(g)})
    record["greenlets"].append({"id": id(main_gr), "name": None,
                                "main": True, "frames": frames_of(main_gr)})
    record["greenlets"].append({"id": id(raw), "name": None, "raw": True,
                                "frames": frames_of(raw)})
    record["greenlets"].append({"id": id(box["greenlet"]), "name": None,
                                "thread_raw": True, "tid": box["tid"],
                                "frames": box["frames"]})
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)


def main(ready):
    ev = gevent.event.Event()
    sem = gevent.lock.Semaphore(1)
    sem.acquire()
    q = gevent.queue.Queue()
    raw = greenlet.greenlet(raw_outer)
    raw.switch()
    box, started = {}, threading.Event()
    threading.Thread(target=thread_body, args=(box, started), daemon=True,
                     name="other").start()
    started.wait()
    everyone = [(gevent.spawn(wait_event, ev), "waiter"),
                (gevent.spawn(take_semaphore, sem), "locker"),
                (gevent.spawn(get_item, q), "getter")]
    for i in range(N_SLEEPERS):
        everyone.append((gevent.spawn(nap), "sleeper-%d" % i))
    for g, name in everyone:
        g.name = name
    # one left unnamed: gevent names it Greenlet-N from its minimal_ident
    anon = gevent.spawn(idle)
    everyone.append((anon, anon.name))
    main_gr = greenlet.getcurrent()
    rep = gevent.spawn(reporter, ready, everyone, main_gr, raw, box)
    gevent.joinall([g for g, _ in everyone] + [rep])  # MARK: joinall


if __name__ == "__main__":
    main(sys.argv[1])  # MARK: main-call
