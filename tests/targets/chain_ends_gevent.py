"""A greenlet blocked reading a gevent socket nobody writes to, which the
main greenlet joins: run's cause names the greenlet at the program's own
line, gevent's socket frame as its innermost, and the socket's fd.

Usage: chain_ends_gevent.py READY_FILE
"""

import os
import sys

import gevent
import gevent.socket

from _ready import write_ready

ours, theirs = gevent.socket.socketpair()


def reader():
    ours.recv(10)  # MARK: gevent-recv


g = gevent.spawn(reader)
gevent.sleep(0.2)
write_ready(sys.argv[1], {"pid": os.getpid(), "fd": ours.fileno()})
g.join()
