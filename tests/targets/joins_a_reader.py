"""The main thread joins a thread blocked reading a socket nobody
writes to (one end of a socketpair).

Usage: joins_a_reader.py READY_FILE.  Runs on 3.6+.

READY_FILE gets the pid, the reader's tid and the fd it reads, as JSON.
"""

import os
import socket
import sys
import threading

from _ready import write_ready
from _tids import native_tid


def reader(sock, ready):
    write_ready(ready, {"pid": os.getpid(), "tid": native_tid(),
                        "fd": sock.fileno()})
    sock.recv(10)  # MARK: recv


a, b = socket.socketpair()
t = threading.Thread(target=reader, args=(a, sys.argv[1]), name="poller")
t.start()
t.join()  # MARK: join
