"""A parent that joins its multiprocessing child before reading what
the child sends it: the child can never finish its send.

Usage: mp_join_first.py queue|pipe.  Runs on 3.6+.

"queue": the child puts a payload bigger than a pipe's buffer on a
multiprocessing.Queue; its feeder thread blocks writing it, and the
child's exit joins that thread (the multiprocessing guide's "joining
processes that use queues" deadlock).  "pipe": the child sends it down
a one-way Pipe (a pipe(2)) from its own line.
"""

import multiprocessing
import sys

PAYLOAD = ["row-%06d-" % i + "x" * 90 for i in range(5000)]


def to_queue(q):
    q.put(PAYLOAD)  # MARK: put


def to_pipe(conn):
    conn.send(PAYLOAD)  # MARK: send


if __name__ == "__main__":
    mp = multiprocessing.get_context("fork")
    if sys.argv[1] == "queue":
        end = mp.Queue()
        child = mp.Process(target=to_queue, args=(end,), name="reporter")
    else:
        end, child_end = mp.Pipe(duplex=False)
        child = mp.Process(target=to_pipe, args=(child_end,),
                           name="exporter")
    child.start()
    child.join()  # MARK: join
