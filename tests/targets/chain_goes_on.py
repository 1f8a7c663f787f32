"""Waits on a thread or jobs that are no end of a chain: run names no
cause for the join of a thread that keeps moving, and one wait (not one
per job) for a concurrent.futures.wait() of the first of several jobs
blocked in recv().

Usage: chain_goes_on.py READY_FILE

- "joiner" joins "mover", which sleeps 10 ms at a time in two places;
- "first" waits for the first of 3 ThreadPoolExecutor jobs, each in
  recv() on a socket nobody writes to;
- "stopper" joins "listener", a socketserver's serve_forever(): a
  server's idle wait ends that chain, an idle cause;
- "cjoin" joins "cruncher", which counts for good: busy, its own cause,
  which names its joiner.
"""

import concurrent.futures
import socket
import socketserver
import sys
import threading
import time

from _ready import ready_when_started
from _tids import native_tid

tids = {}
pairs = [socket.socketpair() for _ in range(3)]
pool = concurrent.futures.ThreadPoolExecutor(3)


def step_a():
    time.sleep(0.01)


def step_b():
    time.sleep(0.01)


def mover():
    tids["mover"] = native_tid()
    while True:
        step_a()
        step_b()


def joiner(t):
    tids["joiner"] = native_tid()
    t.join()  # MARK: goes-on-join


def first():
    tids["first"] = native_tid()
    jobs = [pool.submit(p[0].recv, 10) for p in pairs]
    concurrent.futures.wait(
        jobs, return_when=concurrent.futures.FIRST_COMPLETED)  # MARK: goes-on-first


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        pass


server = socketserver.TCPServer(("127.0.0.1", 0), Handler)


def listener():
    tids["listener"] = native_tid()
    server.serve_forever(poll_interval=600)


def stopper(t):
    tids["stopper"] = native_tid()
    t.join()  # MARK: goes-on-stopper


def cruncher():
    tids["cruncher"] = native_tid()
    n = 0
    while True:
        n += 1


def cjoin(t):
    tids["cjoin"] = native_tid()
    t.join()  # MARK: goes-on-cjoin


m = threading.Thread(target=mover, name="mover", daemon=True)
m.start()
threading.Thread(target=joiner, name="joiner", args=(m,), daemon=True).start()
threading.Thread(target=first, name="first", daemon=True).start()
s = threading.Thread(target=listener, name="listener", daemon=True)
s.start()
threading.Thread(target=stopper, name="stopper", args=(s,),
                 daemon=True).start()
c = threading.Thread(target=cruncher, name="cruncher", daemon=True)
c.start()
threading.Thread(target=cjoin, name="cjoin", args=(c,), daemon=True).start()
ready_when_started(sys.argv[1], tids, 7)
