"""Shared by test targets: the ready file, written so that a test polling
for it never reads half of it (on every CPython from 3.6 on); and the
name of an object's class as the interpreter gives it; a target's main
thread parked once its threads have started."""

import json
import os
import time


def write_ready(path, doc):
    """JSON doc into path, atomically (a rename over it)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.rename(tmp, path)


def class_name(obj, public):
    """obj's class as the interpreter names it (__module__, __name__), by
    the name of the module public where that module exports it under its
    own name (asyncio.queues.PriorityQueue is asyncio.PriorityQueue)."""
    cls = type(obj)
    if getattr(public, cls.__name__, None) is cls:
        return "%s.%s" % (public.__name__, cls.__name__)
    return "%s.%s" % (cls.__module__, cls.__name__)


def ready_when_started(path, tids, count):
    """Once count threads have put their kernel ids into tids, and a
    moment more for them to reach their waits: the ready file ("pid",
    "tids"), then the main thread parked for good."""
    while len(tids) < count:
        time.sleep(0.01)
    time.sleep(0.3)
    write_ready(path, {"pid": os.getpid(), "tids": tids})
    while True:
        time.sleep(3600)
