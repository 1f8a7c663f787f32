"""A trio task parked on a socket read in a worker thread, after the
main thread has exited (pthread_exit(), as main_exits.py): the kernel
keeps no files under the process's own /proc entry then, only under its
threads'.

Usage: trio_main_exits.py READY_FILE

READY_FILE gets, as JSON, "pid" and "fd" (the trio socket's), "local"
and "remote" (its addresses).
"""

import ctypes
import os
import socket
import sys
import threading
import time

import trio

from _ready import write_ready

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(4)
info = {"pid": os.getpid()}


def worker():
    async def main():
        s = trio.socket.socket()
        await s.connect(server.getsockname())
        info.update(fd=s.fileno(), local=s.getsockname(),
                    remote=s.getpeername())
        await s.recv(10)  # MARK: recv

    trio.run(main)


threading.Thread(target=worker).start()
while "fd" not in info:
    time.sleep(0.01)
time.sleep(0.2)
write_ready(sys.argv[1], info)
ctypes.CDLL(None).pthread_exit(None)
