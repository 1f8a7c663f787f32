"""A starlette app under uvicorn, listening on 127.0.0.1 only.

Usage: graph_uvicorn_app.py READY

Writes {"pid": ..., "port": ...} to READY once serving.  GET /stuck
waits for an Event nobody sets; GET /sync, a plain function starlette
runs in anyio's worker threads, waits for a threading.Event nobody sets,
so that with the threads' limiter cut to two tokens the third request
waits for a token; GET /quick, a plain function too, answers at once
(its worker thread then waits for the next job, idle); nothing else
happens unless a client asks.
"""

import asyncio
import json
import os
import socket
import sys
import threading

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

READY = sys.argv[1]
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
# Listening from now on: uvicorn listens only once its lifespan startup,
# which writes READY, is over, and a client that came in between was
# refused.
sock.listen(128)
never = None
gate = threading.Event()


async def stuck(request):
    await never.wait()  # MARK: handler-stuck
    return PlainTextResponse("unreachable")


def sync(request):
    gate.wait()  # MARK: handler-sync
    return PlainTextResponse("unreachable")


def quick(request):
    return PlainTextResponse("quick")


async def startup():
    global never
    never = asyncio.Event()
    anyio.to_thread.current_default_thread_limiter().total_tokens = 2
    with open(READY + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "port": sock.getsockname()[1]}, f)
    os.rename(READY + ".tmp", READY)


app = Starlette(routes=[Route("/stuck", stuck), Route("/sync", sync),
                        Route("/quick", quick)],
                on_startup=[startup])

if __name__ == "__main__":
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                           lifespan="on"))
    server.run(sockets=[sock])
