"""asyncio HTTP clients waiting for a response a server never sends:
httpx (through anyio's SocketStream) and aiohttp, each in a task of its
own, against a server of this process's that accepts and reads nothing.

Usage: http_clients.py READY_FILE

READY_FILE gets, as JSON, "pid", "server" (its address) and "peers":
the clients' addresses as the server's accepted sockets give them
(getpeername()).  Needs httpx and aiohttp (Debian's python3.11).
"""

import asyncio
import os
import socket
import sys
import threading

import aiohttp
import httpx

from _ready import write_ready

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(8)
URL = "http://%s:%d/" % server.getsockname()
peers, accepted = [], []


def accept():
    while len(peers) < 2:
        conn, addr = server.accept()
        accepted.append(conn)
        peers.append(list(addr))
    write_ready(sys.argv[1], {"pid": os.getpid(),
                              "server": list(server.getsockname()),
                              "peers": peers})


async def with_httpx():
    async with httpx.AsyncClient(timeout=None) as client:
        await client.get(URL)  # MARK: httpx-get


async def with_aiohttp():
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(URL) as response:  # MARK: aiohttp-get
            await response.read()


async def main():
    await asyncio.gather(with_httpx(), with_aiohttp())


threading.Thread(target=accept, name="acceptor", daemon=True).start()
asyncio.run(main())
