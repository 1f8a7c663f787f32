"""trio tasks parked on sockets nothing arrives on: a TCP client's
receive_some() from a server that never answers (it accepts nothing),
a recv() on one end of a socketpair, three alike tasks each in a recv()
of a socketpair of its own, and an accept() on a listening socket.

Usage: trio_sockets.py READY_FILE [alike]

With alike, only the three alike tasks (run lists three causes and
counts the rest).

READY_FILE gets, as JSON, "pid" and "fds": for "client", "pair" and
"listener", the socket's fd, and the client's "local" and "remote"
addresses, the listener's "local", as the interpreter gives them
(getsockname(), getpeername()).
"""

import os
import socket
import sys

import trio
import trio.socket

from _ready import write_ready

fds = {}
ALIKE = sys.argv[2:] == ["alike"]


async def client(port):
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    sock = stream.socket
    fds["client"] = {"fd": sock.fileno(), "local": sock.getsockname(),
                     "remote": sock.getpeername()}
    await stream.receive_some(10)  # MARK: trio-client


async def pair():
    a, b = trio.socket.socketpair()
    fds["pair"] = {"fd": a.fileno()}
    await a.recv(10)  # MARK: trio-pair


async def alike():
    a, b = trio.socket.socketpair()
    fds.setdefault("alike", []).append(a.fileno())
    await a.recv(10)  # MARK: trio-alike


async def listener():
    lst = trio.socket.socket()
    await lst.bind(("127.0.0.1", 0))
    lst.listen(4)
    fds["listener"] = {"fd": lst.fileno(), "local": lst.getsockname()}
    await lst.accept()  # MARK: trio-listener


async def main():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    async with trio.open_nursery() as nursery:
        if ALIKE:
            for _ in range(3):
                nursery.start_soon(alike)
        else:
            nursery.start_soon(client, server.getsockname()[1])
            nursery.start_soon(pair)
            nursery.start_soon(listener)
        while len(fds) < (1 if ALIKE else 3) or \
                len(fds.get("alike", ())) < (3 if ALIKE else 0):
            await trio.sleep(0.01)
        await trio.sleep(0.2)
        write_ready(sys.argv[1], {"pid": os.getpid(), "fds": fds})


trio.run(main)
