"""trio tasks parked on sockets nothing arrives on: a TCP client's
receive_some() from a server that never answers (it accepts nothing),
and a recv() on one end of a socketpair.

Usage: trio_sockets.py READY_FILE

READY_FILE gets, as JSON, "pid" and "fds": for "client" and "pair", the
socket's fd, and the client's "local" and "remote" addresses as the
interpreter gives them (getsockname(), getpeername()).
"""

import os
import socket
import sys

import trio
import trio.socket

from _ready import write_ready

fds = {}


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


async def main():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client, server.getsockname()[1])
        nursery.start_soon(pair)
        while len(fds) < 2:
            await trio.sleep(0.01)
        await trio.sleep(0.2)
        write_ready(sys.argv[1], {"pid": os.getpid(), "fds": fds})


trio.run(main)
