"""An aiohttp app, listening on 127.0.0.1 only.

Usage: graph_aiohttp_app.py READY

Writes {"pid": ..., "port": ...} to READY once serving (JSON, written
atomically).  GET /hold takes an asyncio.Lock and, inside it, waits for
an Event nobody sets; GET /take waits for the Lock.  Nothing else
happens unless a client asks.  Needs aiohttp (Debian's python3-aiohttp
on /usr/bin/python3.11).
"""

import asyncio
import os
import sys

from aiohttp import web

from _ready import write_ready


async def hold(request):
    app = request.app
    async with app["lock"]:
        await app["never"].wait()  # MARK: aiohttp-hold
    return web.Response(text="unreachable")


async def take(request):
    async with request.app["lock"]:  # MARK: aiohttp-take
        return web.Response(text="unreachable")


async def main(ready):
    app = web.Application()
    app["lock"], app["never"] = asyncio.Lock(), asyncio.Event()
    app.add_routes([web.get("/hold", hold), web.get("/take", take)])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    write_ready(ready, {"pid": os.getpid(), "port": port})
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
