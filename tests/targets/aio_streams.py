"""asyncio streams waiting for data that never comes: a client's
readline() from a server that never answers, and the server's handler's
readline() from that client, which never sends.

Usage: aio_streams.py READY_FILE

READY_FILE gets, as JSON, "pid" and "fds": for "client" and "handler",
its socket's fd, "local" and "remote" addresses as the interpreter gives
them (the transport's socket: fileno(), getsockname(), getpeername()).
Runs on 3.6+.
"""

import asyncio
import os
import sys

from _ready import write_ready

fds = {}


def note(name, writer):
    sock = writer.get_extra_info("socket")
    fds[name] = {"fd": sock.fileno(), "local": sock.getsockname(),
                 "remote": sock.getpeername()}


async def handler(reader, writer):
    note("handler", writer)
    await reader.readline()  # MARK: handler-reads


async def client(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    note("client", writer)
    await reader.readline()  # MARK: client-reads


async def ready_soon():
    while len(fds) < 2:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    write_ready(sys.argv[1], {"pid": os.getpid(), "fds": fds})


async def main():
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    asyncio.ensure_future(ready_soon())
    await client(port)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main())
