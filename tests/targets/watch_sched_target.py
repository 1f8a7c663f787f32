"""A target for `coroscope watch` on trio tasks or gevent greenlets.

Usage: watch_sched_target.py READY_FILE trio|gevent

  parked   waits on an Event that is never set        (stuck)
  napper   loops on a 50 ms sleep, counting            (not stuck)
  sleeper  sleeps for an hour                          (idle)

under trio (tasks in one nursery) or gevent (greenlets spawned from the
main one).  Once both run it writes READY_FILE (JSON: pid, framework)
atomically.  Lines tests look for carry "# MARK: name".

Needs trio or gevent (Debian's python3-trio, python3-gevent on
/usr/bin/python3.11).
"""

import json
import os
import sys


def write_ready(path, framework):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "framework": framework,
                   "version": list(sys.version_info[:3])}, f)
    os.rename(tmp, path)


def run_trio(ready):
    import trio

    async def parked(event):
        await event.wait()  # MARK: trio-parked

    async def napper():
        n = 0
        while True:
            n += 1
            await trio.sleep(0.05)  # MARK: trio-nap

    async def sleeper():
        await trio.sleep(3600)  # MARK: trio-sleeper

    async def main():
        event = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(parked, event, name="parked")
            nursery.start_soon(napper, name="napper")
            nursery.start_soon(sleeper, name="sleeper")
            await trio.sleep(0.2)
            write_ready(ready, "trio")

    trio.run(main)


def run_gevent(ready):
    import gevent
    import gevent.event

    def parked(event):
        event.wait()  # MARK: gevent-parked

    def napper():
        n = 0
        while True:
            n += 1
            gevent.sleep(0.05)  # MARK: gevent-nap

    def sleeper():
        gevent.sleep(3600)  # MARK: gevent-sleeper

    event = gevent.event.Event()
    first = gevent.spawn(parked, event)
    first.name = "parked"
    second = gevent.spawn(napper)
    second.name = "napper"
    third = gevent.spawn(sleeper)
    third.name = "sleeper"
    gevent.sleep(0.2)
    write_ready(ready, "gevent")
    gevent.joinall([first, second, third])


if __name__ == "__main__":
    {"trio": run_trio, "gevent": run_gevent}[sys.argv[2]](sys.argv[1])
