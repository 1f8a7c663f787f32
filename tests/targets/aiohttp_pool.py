"""aiohttp's connection pools, run out.

Usage: aiohttp_pool.py READY

A local server reads each request and never answers it (/slow), or
answers its headers and never sends the body they promise (/head).
Session `pool` (TCPConnector(limit=2)) has two requests in /slow
(tasks "slow-1", "slow-2") and two more queued for a connection
("queued-1", "queued-2").  Session `single` (limit=1) has one task,
"nested", whose `async with single.get("/head")` keeps the one
connection while it asks the same session for another: it waits for
itself; and so does "leaker" of session `leaky` (limit=1), which keeps a
response in a local, never read nor released.  Session `perhost`
(limit_per_host=1, no total limit): "host-b" has a request to a second
server, and "keeper" keeps a response of the first open in `async with`
while it asks the second: it waits for "host-b" only, not for itself.
The pool's connector is entered in `async with` by the main task, which
holds none of its connections.  Once all are parked, READY gets the pid and what each
connector's own fields say.  Needs aiohttp (Debian's python3-aiohttp
on /usr/bin/python3.11).
"""

import asyncio
import os
import sys

import aiohttp

from _ready import write_ready


async def serve(reader, writer):
    first = await reader.readline()
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    if b"/head" in first:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        await writer.drain()
    await asyncio.Event().wait()


async def fetch(session, url):
    async with session.get(url) as resp:  # MARK: pool-fetch
        return await resp.read()


async def nested(session, base):
    async with session.get(base + "/head") as outer:  # MARK: nested-outer
        await session.get(base + "/slow")  # MARK: nested-inner
        return outer.status


async def keeper(session, base_a, base_b):
    async with session.get(base_a + "/head") as kept:  # MARK: keeper-a
        await session.get(base_b + "/slow")  # MARK: keeper-b
        return kept.status


async def leaker(session, base):
    kept = await session.get(base + "/head")  # never read nor released
    await session.get(base + "/slow")  # MARK: leak-inner
    return kept


def spawn(coro, name):
    task = asyncio.ensure_future(coro)
    task.set_name(name)
    return task


def waiting(connector):
    return sum(len(w) for w in connector._waiters.values())


def said(connector):
    return {"in_use": len(connector._acquired), "limit": connector._limit,
            "waiters": waiting(connector)}


async def until(ok):
    for _ in range(1000):
        if ok():
            return
        await asyncio.sleep(0.01)
    raise SystemExit("never parked")


async def main(ready):
    # (the pool's connector entered in `async with`: that holds no
    # connection of it)
    async with aiohttp.TCPConnector(limit=2) as connector:
        await run(ready, connector)


async def run(ready, connector):
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    base = "http://127.0.0.1:%d" % server.sockets[0].getsockname()[1]
    other = await asyncio.start_server(serve, "127.0.0.1", 0)
    base_b = "http://127.0.0.1:%d" % other.sockets[0].getsockname()[1]
    pool = aiohttp.ClientSession(connector=connector, connector_owner=False)
    perhost = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, limit_per_host=1))
    single = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
    leaky = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
    tasks = [spawn(fetch(pool, base + "/slow"), "slow-%d" % i)
             for i in (1, 2)]
    await until(lambda: len(pool.connector._acquired) == 2)
    tasks += [spawn(fetch(pool, base + "/slow"), "queued-%d" % i)
              for i in (1, 2)]
    tasks.append(spawn(nested(single, base), "nested"))
    tasks.append(spawn(leaker(leaky, base), "leaker"))
    tasks.append(spawn(fetch(perhost, base_b + "/slow"), "host-b"))
    await until(lambda: len(perhost.connector._acquired) == 1)
    tasks.append(spawn(keeper(perhost, base, base_b), "keeper"))
    await until(lambda: waiting(pool.connector) == 2 and
                waiting(single.connector) == 1 and
                waiting(leaky.connector) == 1 and
                waiting(perhost.connector) == 1)
    await asyncio.sleep(0.1)
    write_ready(ready, {"pid": os.getpid(), "pool": said(pool.connector),
                        "single": said(single.connector),
                        "leaky": said(leaky.connector),
                        "perhost": said(perhost.connector)})
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
