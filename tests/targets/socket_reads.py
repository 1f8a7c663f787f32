"""Threads blocked reading sockets or pipes whose other end never
sends: the commonest client hang, and a child's output read to its end.

Usage: socket_reads.py READY_FILE

- "MainThread": an HTTP request (http.client, no timeout) to a server
  of this process's that accepts nothing and never answers;
- "pair": recv() on one end of a socketpair() whose other end this
  process holds;
- "udp": recvfrom() on a UDP socket nothing sends to;
- "reader", joined by "joiner": recv() on another socketpair (a cause
  of the wait-for graph's names it, where the join's chain ends);
- "child": read() of a child's stdout (`sleep 3600`), a pipe;
- "own": os.read() of a pipe whose write end this process holds;
- "connect": connect() to a server whose accept queue is full (listen(0)
  and one connection never accepted): the kernel drops its handshake;
- "accept": accept() on a listening socket no client connects to;
- "select": select.select() to read one end of a socketpair and to write
  to another whose buffers are full (fds["select"], "write");
- "poll": select.poll()'s poll() on another and on a pipe's read end
  (fds["poll"]: the two, "write": the pipe's write end);
- "epoll": selectors' default selector (epoll) on a third.

READY_FILE gets, as JSON, "pid", "tids" by thread name, "child" (its
pid), and "fds": per blocked thread, its fd, and a socket's "local" and
"remote" addresses as the interpreter gives them (getsockname(),
getpeername()), a pipe's "write" end's fd in this process.
"""

import http.client
import os
import select
import selectors
import socket
import subprocess
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


def die_with_parent():
    """(in the child, before exec) SIGKILL when this process ends: a
    test's keeper kills only the target, whose `sleep` lived on"""
    import ctypes
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL


child = subprocess.Popen(["sleep", "3600"], stdout=subprocess.PIPE,
                         preexec_fn=die_with_parent)
fds["child"] = {"fd": child.stdout.fileno()}
own_r, own_w = os.pipe()
fds["own"] = {"fd": own_r, "write": own_w}
full = socket.socket()
full.bind(("127.0.0.1", 0))
full.listen(0)
first = socket.create_connection(full.getsockname())
late = socket.socket()
late.bind(("127.0.0.1", 0))
fds["connect"] = {"fd": late.fileno(), "local": late.getsockname(),
                  "remote": full.getsockname()}
waits = dict((name, socket.socketpair()) for name in
             ("select", "poll", "epoll"))
poll_r, poll_w = os.pipe()
full_w, full_r = socket.socketpair()
full_w.setblocking(False)
try:
    while True:
        full_w.send(b"x" * 65536)
except BlockingIOError:
    pass
fds["select"] = {"fd": waits["select"][0].fileno(),
                 "write": full_w.fileno()}
fds["poll"] = {"fds": [waits["poll"][0].fileno(), poll_r], "write": poll_w}
fds["epoll"] = {"fd": waits["epoll"][0].fileno()}
lonely = socket.socket()
lonely.bind(("127.0.0.1", 0))
lonely.listen(1)
fds["accept"] = {"fd": lonely.fileno(), "local": lonely.getsockname()}


def pair():
    tids["pair"] = native_tid()
    a.recv(10)  # MARK: read-pair


def datagram():
    tids["udp"] = native_tid()
    udp.recvfrom(10)  # MARK: read-udp


def from_child():
    tids["child"] = native_tid()
    child.stdout.read()  # MARK: read-child


def own():
    tids["own"] = native_tid()
    os.read(own_r, 1)  # MARK: read-own


def connect():
    tids["connect"] = native_tid()
    late.connect(full.getsockname())  # MARK: read-connect


def accept():
    tids["accept"] = native_tid()
    lonely.accept()  # MARK: read-accept


def waiter(name):
    sock = waits[name][0]
    tids[name] = native_tid()
    if name == "select":
        select.select([sock], [full_w], [])  # MARK: read-select
    elif name == "poll":
        p = select.poll()
        p.register(sock, select.POLLIN)
        p.register(poll_r, select.POLLIN)
        p.poll()  # MARK: read-poll
    else:
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ)
        sel.select()  # MARK: read-epoll


def reader():
    tids["reader"] = native_tid()
    c.recv(10)  # MARK: read-joined


def joiner(t):
    tids["joiner"] = native_tid()
    t.join()


for target, name in ((pair, "pair"), (datagram, "udp"),
                     (from_child, "child"), (own, "own"),
                     (connect, "connect"), (accept, "accept")):
    threading.Thread(target=target, name=name).start()
for name in waits:
    threading.Thread(target=waiter, args=(name,), name=name).start()
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
    while len(tids) < 12:
        time.sleep(0.01)
    time.sleep(0.3)
    write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids, "fds": fds,
                              "child": child.pid})


threading.Thread(target=ready_soon, name="ready", daemon=True).start()
conn.request("GET", "/")
conn.getresponse()  # MARK: read-http
