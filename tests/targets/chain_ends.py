"""Threads waiting on a thread or a job that waits on nothing a graph
of Python objects sees: the end of the chain is the cause.

Usage: chain_ends.py READY_FILE

- "joiner" joins "reader", which is blocked in recv() on a socket whose
  other end this process holds and never writes to;
- "asker" waits in Future.result() for a ThreadPoolExecutor's job,
  time.sleep(900), running in the pool's worker;
- "holder" holds a Lock while blocked in recv() (as "reader"), which
  "taker" waits to take;
- "queued" waits in Future.result() for a job queued behind asker's in
  the pool's one worker;
- "asker2" waits in Future.result() for a job of a second pool waiting
  on an Event nobody sets, and "joiner2" joins "asker2": both wait
  behind that Event.

READY_FILE gets, as JSON, "pid" and "tids": each thread's kernel id by
name, the pools' workers' as "worker" and "worker2".
"""

import concurrent.futures
import socket
import sys
import threading
import time

from _ready import ready_when_started
from _tids import native_tid

tids = {}
ours, theirs = socket.socketpair()
mine, yours = socket.socketpair()
lock = threading.Lock()
pool = concurrent.futures.ThreadPoolExecutor(1)
pool2 = concurrent.futures.ThreadPoolExecutor(1)
gate = threading.Event()


def reader():
    tids["reader"] = native_tid()
    ours.recv(10)  # MARK: chain-recv


def joiner(t):
    tids["joiner"] = native_tid()
    t.join()  # MARK: chain-join


def job():
    tids["worker"] = native_tid()
    time.sleep(900)  # MARK: chain-job


def asker():
    tids["asker"] = native_tid()
    future = pool.submit(job)
    future.result()  # MARK: chain-result


def queued():
    tids["queued"] = native_tid()
    while "worker" not in tids:
        time.sleep(0.01)
    # (the pool's one worker runs asker's job for good)
    pool.submit(job).result()  # MARK: chain-queued


def gated():
    tids["worker2"] = native_tid()
    gate.wait()  # MARK: chain-gate


def asker2():
    tids["asker2"] = native_tid()
    pool2.submit(gated).result()  # MARK: chain-gated


def joiner2(t):
    tids["joiner2"] = native_tid()
    t.join()  # MARK: chain-join2


def holder():
    tids["holder"] = native_tid()
    with lock:
        mine.recv(10)  # MARK: chain-holder


def taker():
    tids["taker"] = native_tid()
    while not lock.locked():
        time.sleep(0.01)
    with lock:  # MARK: chain-taker
        pass


r = threading.Thread(target=reader, name="reader", daemon=True)
r.start()
threading.Thread(target=joiner, name="joiner", args=(r,), daemon=True).start()
threading.Thread(target=asker, name="asker", daemon=True).start()
for fn in (holder, taker, queued):
    threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
a2 = threading.Thread(target=asker2, name="asker2", daemon=True)
a2.start()
threading.Thread(target=joiner2, name="joiner2", args=(a2,),
                 daemon=True).start()
ready_when_started(sys.argv[1], tids, 10)
