"""Two tasks waiting on many: "all-waiter" in asyncio.wait() of 12
children (all of them), "first-waiter" in asyncio.wait() of 12 others
with FIRST_COMPLETED; every child parked on one Event never set.

Usage: wide_waits.py READY_FILE

READY_FILE gets the pid and the children's names, as JSON.
"""

import asyncio
import os
import sys

from _ready import write_ready

WIDTH = 12


async def child(ev):
    await ev.wait()  # MARK: child


async def waiter(ev, prefix, when):
    kids = [asyncio.ensure_future(child(ev)) for _ in range(WIDTH)]
    for i, k in enumerate(kids):
        if hasattr(k, "set_name"):
            k.set_name("%s-%d" % (prefix, i))
    await asyncio.wait(kids, return_when=when)  # MARK: wait


async def main(ready):
    ev = asyncio.Event()
    waiters = [asyncio.ensure_future(waiter(ev, "all", asyncio.ALL_COMPLETED)),
               asyncio.ensure_future(waiter(ev, "first",
                                            asyncio.FIRST_COMPLETED))]
    for w, name in zip(waiters, ("all-waiter", "first-waiter")):
        if hasattr(w, "set_name"):
            w.set_name(name)
    await asyncio.sleep(0.2)
    write_ready(ready, {"pid": os.getpid(), "width": WIDTH})
    await asyncio.gather(*waiters)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
