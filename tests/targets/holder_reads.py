"""A lock's holder parked reading a socket nobody writes to, with a
waiter behind it: run's cause for the lock names the holder's socket.

Usage: holder_reads.py READY_FILE asyncio|gevent

asyncio: task "holder" takes an asyncio.Lock and reads a StreamReader
over one end of a socketpair; task "waiter" waits for the lock.
gevent: greenlet "holder" takes a gevent Semaphore and recv()s on a
gevent socket; greenlet "waiter" waits for it.  READY_FILE gets, as
JSON: "pid" and "fd" (the socket the holder reads).  Lines tests look
for carry "# MARK: name".
"""

import os
import socket
import sys

from _ready import write_ready


def run_asyncio(ready):
    import asyncio

    async def holder(lock, reader):
        async with lock:
            await reader.read(10)  # MARK: asyncio-holder-reads

    async def waiter(lock):
        async with lock:  # MARK: asyncio-holder-waiter
            pass

    async def main():
        ours, theirs = socket.socketpair()
        reader, _ = await asyncio.open_connection(sock=ours)
        lock = asyncio.Lock()
        held = asyncio.ensure_future(holder(lock, reader))
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(waiter(lock))
        await asyncio.sleep(0.05)
        write_ready(ready, {"pid": os.getpid(), "fd": ours.fileno()})
        await asyncio.gather(held, waiting)
        theirs.close()

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main())


def run_gevent(ready):
    import gevent
    import gevent.lock
    import gevent.socket

    ours, theirs = gevent.socket.socketpair()
    sem = gevent.lock.Semaphore(1)

    def holder():
        with sem:
            ours.recv(10)  # MARK: gevent-holder-reads

    def waiter():
        with sem:  # MARK: gevent-holder-waiter
            pass

    h = gevent.spawn(holder)
    h.name = "holder"
    gevent.sleep(0.05)
    w = gevent.spawn(waiter)
    w.name = "waiter"
    gevent.sleep(0.05)
    write_ready(ready, {"pid": os.getpid(), "fd": ours.fileno()})
    gevent.joinall([h, w])


if __name__ == "__main__":
    {"asyncio": run_asyncio, "gevent": run_gevent}[sys.argv[2]](sys.argv[1])
