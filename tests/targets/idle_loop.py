"""An asyncio event loop in run_forever() with nothing left to run: its
one task ended, no callback, no timer.

Usage: idle_loop.py READY_FILE [bare|server|timer|unwoken|fed|executor|
                               serve-forever]

- bare: nothing registered but the loop's own wake-up pipe;
- server: a TCP server (asyncio.start_server()) nobody connects to: the
  loop waits only on its listening socket;
- timer: a timer due in an hour (no cause: the loop has work left);
- unwoken: a task waits on an asyncio.Event that a thread sets, not
  through call_soon_threadsafe(): the loop sleeps on with the task's
  wake-up ready;
- fed: a thread gives the loop a callback every 50 ms, through
  call_soon_threadsafe() (no cause: the loop runs);
- executor: run_until_complete() of an executor's job that sleeps an
  hour (no idle cause: the job's thread will complete it);
- serve-forever: a task in the TCP server's serve_forever() (3.7 on),
  parked on a future nothing sets by design: an idle cause, no stuck
  task.

READY_FILE gets, as JSON, "pid" and, with server and serve-forever,
"fd" and "address"
(the listening socket's fileno() and getsockname()).
"""

import asyncio
import os
import sys
import threading
import time

from _ready import write_ready

ready = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "bare"
loop = asyncio.new_event_loop()
doc = {"pid": os.getpid()}


async def handle(reader, writer):
    writer.close()


async def start():
    if mode == "server":
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        sock = server.sockets[0]
        doc.update(fd=sock.fileno(), address=sock.getsockname()[:2])
    elif mode == "timer":
        loop.call_later(3600, print, "late")


async def unwoken():
    event = asyncio.Event()

    def setter():
        time.sleep(0.2)
        event.set()  # (from a thread: the loop is not woken)
        write_ready(ready, doc)

    threading.Thread(target=setter).start()
    await event.wait()


def feeder():
    while True:
        time.sleep(0.05)
        loop.call_soon_threadsafe(len, "x")


async def serve_forever():
    await start()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    sock = server.sockets[0]
    doc.update(fd=sock.fileno(), address=sock.getsockname()[:2])
    write_ready(ready, doc)
    await server.serve_forever()  # MARK: serve-forever


if mode == "serve-forever":
    loop.run_until_complete(serve_forever())
if mode == "unwoken":
    loop.run_until_complete(unwoken())  # MARK: unwoken
elif mode == "fed":
    threading.Thread(target=feeder, daemon=True).start()
elif mode == "executor":
    write_ready(ready, doc)
    loop.run_until_complete(loop.run_in_executor(None, time.sleep, 3600))
loop.run_until_complete(start())
write_ready(ready, doc)
loop.run_forever()  # MARK: run-forever
