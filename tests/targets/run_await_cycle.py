"""A hanging command for `coroscope run`: two asyncio tasks that await
each other, and a stuck Python child.

Usage: run_await_cycle.py PIDS_FILE

The child (run_child.py) runs in a session of its own, so it is not in
the command's process group: only a walk of the process tree finds it.
Once the child is parked and the two tasks wait on each other, the
program writes {"pid": ..., "child": ...} to PIDS_FILE (atomically), then
hangs for good: asyncio never notices a cycle of tasks.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
tasks = {}


def write_json(path, data):
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.rename(path + ".tmp", path)


async def ping():
    await asyncio.sleep(0)
    await tasks["pong"]  # MARK: ping-awaits


async def pong():
    await asyncio.sleep(0)
    await tasks["ping"]  # MARK: pong-awaits


async def main(pids_file, child):
    loop = asyncio.get_event_loop()
    for name, coro in (("ping", ping()), ("pong", pong())):
        tasks[name] = loop.create_task(coro)
        if hasattr(tasks[name], "set_name"):
            tasks[name].set_name(name)
    await asyncio.sleep(0.05)
    write_json(pids_file, {"pid": os.getpid(), "child": child.pid})
    await asyncio.gather(tasks["ping"], tasks["pong"])  # MARK: main-gathers


def start_child(ready):
    child = subprocess.Popen([sys.executable,
                              os.path.join(HERE, "run_child.py"), ready],
                             start_new_session=True)
    deadline = time.monotonic() + 20
    while not os.path.exists(ready) and time.monotonic() < deadline:
        time.sleep(0.01)
    return child


if __name__ == "__main__":
    pids_file = sys.argv[1]
    child = start_child(pids_file + ".child-ready")
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(pids_file, child))
