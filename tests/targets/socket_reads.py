"""Threads blocked reading sockets whose other end never sends: the
commonest client hang.

Usage: socket_reads.py READY_FILE

- "MainThread": an HTTP request (http.client, no timeout) to a server
  of this process's that accepts nothing and never answers;
- "pair": recv() on one end of a socketpair() whose other end this
  process holds;
- "udp": recvfrom() on a UDP socket nothing sends to;
- "reader", joined by "joiner": recv() on another socketpair (a cause
  of the wait-for graph's names it, where the join's chain ends).

READY_FILE gets, as JSON, "pid", "tids" by thread name, and "fds": per
blocked thread, its socket's fd, "local" and "remote" addresses as the
interpreter gives them (getsockname(), getpeername()).
"""

import http.client
import os
import socket
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

tids, fds = {}, {}
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(4)
a, b = socket.socketpair()
c, d = socket.socketpair()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
fds["udp"] = {"fd": udp.fileno(), "local": udp.getsockname()}
fds["pair"] = {"fd": a.fileno()}


def pair():
    tids["pair"] = native_tid()
    a.recv(10)  # MARK: read-pair


def datagram():
    tids["udp"] = native_tid()
    udp.recvfrom(10)  # MARK: read-udp


def reader():
    tids["reader"] = native_tid()
    c.recv(10)  # MARK: read-joined


def joiner(t):
    tids["joiner"] = native_tid()
    t.join()


for target in (pair, datagram):
    threading.Thread(target=target, name=target.__name__.replace(
        "datagram", "udp")).start()
r = threading.Thread(target=reader, name="reader")
r.start()
threading.Thread(target=joiner, args=(r,), name="joiner").start()
conn = http.client.HTTPConnection("127.0.0.1", server.getsockname()[1])
conn.connect()
fds["MainThread"] = {"fd": conn.sock.fileno(),
                     "local": conn.sock.getsockname(),
                     "remote": conn.sock.getpeername()}
tids["MainThread"] = native_tid()


def ready_soon():
    while len(tids) < 5:
        time.sleep(0.01)
    time.sleep(0.3)
    write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids, "fds": fds})


threading.Thread(target=ready_soon, name="ready", daemon=True).start()
conn.request("GET", "/")
conn.getresponse()  # MARK: read-http
