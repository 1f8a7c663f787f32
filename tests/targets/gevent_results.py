"""AsyncResults set while greenlets still wait on them (gevent).

Usage: gevent_results.py READY_FILE

Greenlets "on-value" and "on-error" wait in get() on two AsyncResults;
then the main greenlet sets one's value and the other's exception and
sleeps in the real time.sleep(), so the hub never runs again: each
result is ready and still keeps its waiter.  READY_FILE (JSON): pid and
the results' addresses by name ("value", "error").

Needs gevent (Debian's python3-gevent on /usr/bin/python3.11).
"""

import os
import sys
import time

import gevent
import gevent.event

from _ready import write_ready

value, error = gevent.event.AsyncResult(), gevent.event.AsyncResult()
for name, result in (("on-value", value), ("on-error", error)):
    gevent.spawn(result.get).name = name
gevent.sleep(0.05)  # both wait
value.set(42)
error.set_exception(ValueError("never seen"))
write_ready(sys.argv[1], {"pid": os.getpid(),
                          "objects": {"value": id(value),
                                      "error": id(error)}})
time.sleep(3600)  # not gevent.sleep: the hub must not notify them
