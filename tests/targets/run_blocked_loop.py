"""A `coroscope run` target: an event loop blocked inside a task's step.

Usage: run_blocked_loop.py READY_FILE
                           [sleep|recv|poll|poll-woken|poll-away|spin|churn|
                            yields|crunch-yields|crunch-bursts|
                            poll-check-waits|young-loops|late-thread]

The task 'blocker' calls time.sleep() (or recv() on a socket nothing
writes to, or time.sleep(0.01) in a loop polling for a flag nothing
sets) inside its coroutine, or, with "yields", time.sleep(0.05) and then
`await asyncio.sleep(0)` in a loop (the loop turns between: not
blocked), so its loop never runs again: a ticker, a queue's consumer
and producer, and main()'s gather all stay parked, none of them the
cause.  With "poll-woken", a fifth task awaits a future the blocker
sets before it polls: done, its task's wake-up queued behind the
blocker's step for ever (as when a sleep's timer fires in the turn the
loop blocks in).  With "poll-away", the polling loop (its check a
flag's, too quick for a sample to find), 2.8 s in, sleeps 0.25 s once
at another line, where one sample at most finds it (as one finds a
poll at its check's line now and then).  With "spin",
the blocker computes for ever in one step (busy, blocked); with
"churn", it awaits one short task after another, each computing for
20 ms in its one step: the thread as busy, a task's step running at
every sample, but a new task's each time, and the loop turns.  With
"crunch-yields", the blocker computes for 5 ms, then awaits
asyncio.sleep(0), for ever, beside the consumer alone (no ticker, no
producer): the thread busy, the blocker's step running at almost every
sample, no other task moving, and yet the loop turns; with
"crunch-bursts", the same with 100 ms of computing, then 32 turns
(a ready queue's left end is back where it was after 32 pops).  With
"poll-check-waits", the polling loop's check is a function of the
program's own that waits 10 ms in select() on a pipe nothing writes
to, then it sleeps 10 ms: the samples find it at either line.  Writes
READY_FILE just before blocking.  With "young-loops", nothing
blocks: a new thread every 0.13 s runs a loop of its own for a job
that polls as poll-check-waits does for 0.6 s, then awaits, three
times, and ends (threads the samples see only in their last part, in
one step since they first saw it).  With "late-thread", a loop blocked
in its main task's step (time.sleep(3600)), beside a ticker, runs in a
thread started 3.8 s in (of run's 5 s, whose samples cover the last
2.5: a thread started during them, and watched for less than half
their window).  A way prefixed "uvloop-" runs on
uvloop's loop (whose ready queue is a field of its C object).

Runs on 3.6+.
"""
import asyncio
import os
import select
import socket
import sys
import time


NEVER = False


async def ticker():
    while True:
        await asyncio.sleep(0.05)


async def consumer(q):
    while True:
        await q.get()  # MARK: consumer


async def producer(q):
    while True:
        await asyncio.sleep(0.02)
        await q.put(1)


async def crunch():
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        pass


def check_waits(fd):
    got = select.select([fd], [], [], 0.01)[0]  # MARK: blocked-poll-check
    return bool(got)


async def woken(fut):
    await fut  # MARK: woken


async def blocker(ready, how, fut):
    await asyncio.sleep(0.3)
    fut.set_result(1)
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    if how == "recv":
        a, b = socket.socketpair()
        a.recv(10)  # MARK: blocked-recv
    elif how in ("poll", "poll-woken"):
        while not os.path.exists(ready + ".never"):
            time.sleep(0.01)  # MARK: blocked-poll
    elif how == "poll-check-waits":
        r, w = os.pipe()
        while not check_waits(r):
            time.sleep(0.01)  # MARK: blocked-poll-sleep
    elif how == "poll-away":
        away = time.monotonic() + 2.8
        while not NEVER:
            if away and time.monotonic() >= away:
                away = 0
                time.sleep(0.25)  # MARK: blocked-away
            time.sleep(0.01)  # MARK: blocked-poll-back
    elif how == "spin":
        while True:
            sum(range(10000))  # MARK: blocked-spin
    elif how == "churn":
        while True:
            await asyncio.ensure_future(crunch())
    elif how in ("crunch-yields", "crunch-bursts"):
        ms, turns = (0.005, 1) if how == "crunch-yields" else (0.1, 32)
        while True:
            end = time.monotonic() + ms
            while time.monotonic() < end:
                sum(range(1000))  # MARK: crunch-yields
            for _ in range(turns):
                await asyncio.sleep(0)
    elif how == "yields":
        while True:
            time.sleep(0.05)
            await asyncio.sleep(0)
    else:
        time.sleep(3600)  # MARK: blocked-sleep


async def chunky_job(fd):
    # Steps of 0.3 s and a job of 0.9 s by the clock, not by a count of
    # sleeps: on a loaded machine 90 sleeps of 10 ms took over 1.25 s,
    # and a thread that lives half the sampled window may be a cause.
    end = time.monotonic() + 0.9
    while time.monotonic() < end:
        step_end = min(end, time.monotonic() + 0.3)
        while time.monotonic() < step_end:
            check_waits(fd)
            time.sleep(0.01)  # MARK: young-sleep
        await asyncio.sleep(0.001)


def young_loops(ready):
    """A new thread every 0.13 s, each running a loop of its own for a
    job that goes back to it every 0.6 s, then ends: no loop blocked."""
    import threading
    r, w = os.pipe()

    def run_one():
        loop = asyncio.new_event_loop()
        loop.run_until_complete(chunky_job(r))
        loop.close()

    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    while True:
        threading.Thread(target=run_one).start()
        time.sleep(0.13)


async def main(ready, how):
    q = asyncio.Queue()
    fut = asyncio.get_event_loop().create_future()
    if how in ("crunch-yields", "crunch-bursts"):
        coros = [consumer(q)]
    else:
        coros = [ticker(), consumer(q), producer(q)]
    if how == "poll-woken":
        coros.append(woken(fut))
    coros.append(blocker(ready, how, fut))
    tasks = [asyncio.ensure_future(c) for c in coros]
    if hasattr(tasks[-1], "set_name"):
        tasks[-1].set_name("blocker")
    await asyncio.gather(*tasks)


async def late_main(ready, settle):
    asyncio.ensure_future(ticker())
    await asyncio.sleep(0.01)
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    if settle:
        time.sleep(0.45)  # MARK: late-settle
    time.sleep(3600)  # MARK: late-sleep


def late_thread(ready, settle=False):
    """Nothing for 3.8 s, then a thread named "late-loop" whose loop
    blocks in its main task's step, beside a ticker; joined.  settle:
    the step sleeps 0.45 s at another line first, so that a sample sees
    it there."""
    import threading

    def late():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.run_until_complete(late_main(ready, settle))

    time.sleep(3.8)
    t = threading.Thread(target=late, name="late-loop")
    t.start()
    t.join()


how = sys.argv[2] if len(sys.argv) > 2 else "sleep"
if how == "young-loops":
    young_loops(sys.argv[1])
if how == "late-thread":
    late_thread(sys.argv[1])
if how == "late-thread-settles":
    late_thread(sys.argv[1], settle=True)
if how.startswith("uvloop-"):
    import uvloop
    how = how[len("uvloop-"):]
    loop = uvloop.new_event_loop()
else:
    loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1], how))
