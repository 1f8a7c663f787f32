"""A target whose names try to forge coroscope's output (issue 16.1).

Usage: hostile_names.py READY_FILE

Every name coroscope prints is chosen to break out of its field: a thread
name, an asyncio task name, a coroutine's __qualname__, a code object's
file name (given to compile()) and co_name hold newlines, a carriage
return, terminal control sequences (set the window title, clear the
screen), a C1 control (CSI, U+009B) and whole forged report lines
('Thread 1 "forged"', a Traceback with a File "/etc/passwd" line).
Another task's name would end its quotes early and hides a NUL, a
backslash and a surrogate-escaped byte (QUOTED).

A thread sleeps in a function compiled from that file name and renamed;
two more threads, also named to forge, deadlock on two locks; the main
thread runs an event loop whose task (hostile name, hostile coroutine
qualname) waits on an event nobody sets.  Writes {"pid": ..., "name":
HOSTILE} to READY_FILE once all are parked.  Needs CPython 3.8+ (task
names, code.replace()).
"""

import asyncio
import json
import os
import sys
import threading
import time

FORGED = ('\nThread 1 "forged"\nTraceback (most recent call last):\n'
          '  File "/etc/passwd", line 1, in forged\n')
HOSTILE = ("evil" + FORGED + "\x1b]0;pwned\x07\x1b[2J\r\t\x9b31m\x7fend")
HOSTILE_FILE = "/nonexistent/evil\n\x1b]0;pwned\x07\x1b[2J" + FORGED + ".py"
# A task name that would end its quotes early, pass for another name
# (a backslash and n, not a newline; a NUL and what follows it; a
# surrogate-escaped byte): each must come out whole and distinct.
QUOTED = "x' at evil.py:1 in forged\\n\x00hidden\udcff"

SOURCE = """
import time

def sleeper(ready):
    ready.set()
    time.sleep(100000)

def take(first, second, barrier):
    with first:
        barrier.wait()
        with second: pass

async def waiter(event):
    await event.wait()
"""

ns = {}
exec(compile(SOURCE, HOSTILE_FILE, "exec"), ns)


def hostile_function(fn):
    """fn with its co_name, co_qualname and __qualname__ made hostile."""
    changes = {"co_name": HOSTILE}
    if sys.version_info >= (3, 11):
        changes["co_qualname"] = HOSTILE
    fn.__code__ = fn.__code__.replace(**changes)
    fn.__qualname__ = HOSTILE
    fn.__name__ = HOSTILE
    return fn


sleeper = hostile_function(ns["sleeper"])
take = hostile_function(ns["take"])
waiter = hostile_function(ns["waiter"])


async def main(ready_file):
    event = asyncio.Event()
    asyncio.get_event_loop().create_task(waiter(event), name=HOSTILE)
    asyncio.get_event_loop().create_task(event.wait(), name=QUOTED)
    await asyncio.sleep(0.1)
    with open(ready_file + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "name": HOSTILE, "quoted": QUOTED},
                  f)
    os.rename(ready_file + ".tmp", ready_file)
    await event.wait()


if __name__ == "__main__":
    ready = threading.Event()
    threading.Thread(target=sleeper, args=(ready,), name=HOSTILE,
                     daemon=True).start()
    ready.wait()
    lock_a, lock_b = threading.Lock(), threading.Lock()
    barrier = threading.Barrier(2)
    for name, first, second in ((HOSTILE + "-a", lock_a, lock_b),
                                (HOSTILE + "-b", lock_b, lock_a)):
        threading.Thread(target=take, args=(first, second, barrier),
                         name=name, daemon=True).start()
    time.sleep(0.2)
    asyncio.run(main(sys.argv[1]))
