"""Greenlets parked on gevent sockets whose peers never answer: the
gevent counterpart of socket_reads.py.

Usage: gevent_sockets.py READY_FILE

With gevent's monkey-patching (as gunicorn's gevent workers and most
gevent programs run):
- "fetch": recv() of a connection to this process's server, which
  accepts it and never answers;
- "listener": the server's accept() loop, waiting for the next client;
- "sender": sendall() of more than the kernel buffers to a server that
  never reads;
- "http": urllib's request to the same silent server (http.client reads
  the answer through the socket's makefile(): recv_into());
- "wsgi": gevent's own WSGI server in serve_forever(), no client coming
  (it waits on the server's stop event).

READY_FILE gets, as JSON, "pid" and "fds": per greenlet, its socket's fd
and "local" and "remote" addresses as getsockname() and getpeername()
give them ("http": only "remote", its fd is urllib's).
"""

from gevent import monkey

monkey.patch_all()

import os  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import urllib.request  # noqa: E402

import gevent  # noqa: E402
from gevent.pywsgi import WSGIServer  # noqa: E402

from _ready import write_ready  # noqa: E402

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(16)
deaf = socket.socket()
deaf.bind(("127.0.0.1", 0))
deaf.listen(1)
fds, kept = {}, []
fds["listener"] = {"fd": server.fileno(), "local": server.getsockname()}


def listener():
    while True:
        conn, _ = server.accept()  # MARK: accept
        kept.append(conn)


def fetch():
    c = socket.create_connection(server.getsockname())
    fds["fetch"] = {"fd": c.fileno(), "local": c.getsockname(),
                    "remote": c.getpeername()}
    c.recv(100)  # MARK: recv


def sender():
    c = socket.create_connection(deaf.getsockname())
    fds["sender"] = {"fd": c.fileno(), "local": c.getsockname(),
                     "remote": c.getpeername()}
    c.sendall(b"x" * (64 << 20))  # MARK: send


def http():
    fds["http"] = {"remote": server.getsockname()}
    urllib.request.urlopen("http://%s:%d/" % server.getsockname())  # MARK: http


def wsgi():
    WSGIServer(("127.0.0.1", 0), None, log=None).serve_forever()  # MARK: wsgi


greenlets = [gevent.spawn(f)
             for f in (listener, fetch, sender, http, wsgi)]
gevent.sleep(0.5)
write_ready(sys.argv[1], {"pid": os.getpid(), "fds": fds})
gevent.joinall(greenlets)
