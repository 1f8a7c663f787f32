"""A trio task waiting in trio.to_thread.run_sync() for a job blocked in
recv() on a socket nobody writes to: run's stuck-task cause follows the
wait to the worker thread running the job.

Usage: chain_ends_trio.py READY_FILE
"""

import os
import socket
import sys

import trio

from _ready import write_ready
from _tids import native_tid

ours, theirs = socket.socketpair()
tids = {}


def job():
    tids["worker"] = native_tid()
    ours.recv(10)


async def threaded():
    await trio.to_thread.run_sync(job)  # MARK: trio-to-thread


async def main():
    async with trio.open_nursery() as nursery:
        nursery.start_soon(threaded)
        while not tids:
            await trio.sleep(0.01)
        await trio.sleep(0.2)
        write_ready(sys.argv[1], {"pid": os.getpid(), "tids": tids})


trio.run(main)
