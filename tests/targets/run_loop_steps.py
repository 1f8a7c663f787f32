"""A `coroscope run` target: an event loop that turns, one task's steps
alike at every sample, while another task waits on a queue nothing
feeds (the hang).

Usage: run_loop_steps.py READY_FILE reenter|crunch

With "reenter", the task 'stepper' calls handle() again and again, which
sleeps 4 ms at each of two lines (a synchronous client's calls), then
awaits asyncio.sleep(0): back to its loop every 8 ms, handle()'s frame
entered again at the same address from the same line.  With "crunch",
it computes for 5 ms, then awaits asyncio.sleep(0).  Neither blocks the
loop; no other task of the loop moves either.  Writes READY_FILE once
the steps run.

Runs on 3.6+.
"""
import asyncio
import os
import sys
import time


def handle():
    time.sleep(0.004)  # MARK: handle-a
    time.sleep(0.004)  # MARK: handle-b


def crunch():
    end = time.monotonic() + 0.005
    while time.monotonic() < end:  # MARK: crunch
        pass


async def stepper(ready, how):
    work = handle if how == "reenter" else crunch
    for i in range(1 << 62):
        work()
        await asyncio.sleep(0)
        if i == 20:
            with open(ready + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(ready + ".tmp", ready)


async def consumer(q):
    await q.get()  # MARK: consumer


async def main(ready, how):
    q = asyncio.Queue()
    tasks = [asyncio.ensure_future(consumer(q)),
             asyncio.ensure_future(stepper(ready, how))]
    if hasattr(tasks[-1], "set_name"):
        tasks[-1].set_name("stepper")
    await asyncio.gather(*tasks)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1], sys.argv[2]))
