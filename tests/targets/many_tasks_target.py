"""A target with 10,000 asyncio tasks, for coroscope's "second stack" tests.

Usage: many_tasks_target.py READY_FILE [COUNT]

COUNT (default 10000) tasks each run a chain of five coroutines whose
innermost one awaits the same never-completed future.  Once they are all
parked, the recorder task (the loop's first task) writes to READY_FILE
(atomically): every task id, the shared future's id, and for a few sample
tasks the full await chain as the process sees it; then it parks in
time.sleep() inside its own coroutine, so it is the one running task.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import gc
import json
import os
import platform
import sys
import time

HAS_NAMES = sys.version_info[:2] >= (3, 8)
SHARED = []         # the one future every task ends up awaiting
TASKS = []          # the recorder task
UNREADABLE = []     # see unreadable_mapping()


async def level5(i):
    await SHARED[0]  # MARK: many-level5


async def level4(i):
    await level5(i)  # MARK: many-level4


async def level3(i):
    await level4(i)  # MARK: many-level3


async def level2(i):
    await level3(i)  # MARK: many-level2


async def level1(i):
    await level2(i)  # MARK: many-level1


def chain_of(coro):
    out = []
    while type(coro).__name__ == "coroutine" and len(out) < 10:
        out.append(coro)
        coro = coro.cr_await
    return out


def task_coro(task):
    if hasattr(task, "get_coro"):
        return task.get_coro()
    return task._coro


def unreadable_mapping(near):
    """A writable mapping nobody can read: a shared mapping of a file
    truncated under it (a read past the file's end faults), as some
    device mappings are.  coroscope copies every writable mapping of a
    stopped target (on two threads, many reads to a call): it must step
    over this one and still copy the rest."""
    import mmap
    import tempfile
    fd, path = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(near)))
    try:
        os.ftruncate(fd, 1 << 20)
        UNREADABLE.append(mmap.mmap(fd, 1 << 20))
        os.ftruncate(fd, 0)
    except (OSError, ValueError):
        # A filesystem without shared writable mappings: the tests that
        # look for this one say so; the others need not fail with it.
        pass
    finally:
        os.close(fd)
        os.unlink(path)


def write_ready(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


async def recorder(loop, ready_path, count):
    SHARED.append(loop.create_future())
    tasks = []
    for i in range(count):
        if HAS_NAMES:
            tasks.append(loop.create_task(level1(i), name="w-%d" % i))
        else:
            tasks.append(loop.create_task(level1(i)))
    # Every task parks within its first step; a couple of loop turns suffice.
    await asyncio.sleep(0.05)
    while not all(t._fut_waiter is not None for t in tasks):
        await asyncio.sleep(0.05)

    samples = {}
    for i in sorted(set([0, 1, count // 2, count - 1])):
        t = tasks[i]
        frames = []
        for c in reversed(chain_of(task_coro(t))):
            frames.append({"id": id(c), "qualname": c.__qualname__,
                           "file": c.cr_code.co_filename,
                           "line": c.cr_frame.f_lineno})
        samples[str(i)] = {
            "id": id(t), "coro": id(task_coro(t)),
            "name": t.get_name() if HAS_NAMES else "level1",
            "stack": frames,
        }
    me = TASKS[0]
    gc.collect()
    write_ready(ready_path, {
        "pid": os.getpid(),
        "version": platform.python_version(),
        "count": count,
        "recorder": id(me),
        "recorder_coro": id(task_coro(me)),
        "main_file": os.path.abspath(__file__),
        "shared_future": id(SHARED[0]),
        "task_ids": [id(t) for t in tasks],
        "samples": samples,
    })
    while True: time.sleep(3600)  # MARK: many-recorder-park


def main():
    ready_path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    unreadable_mapping(ready_path)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    coro = recorder(loop, ready_path, count)
    if HAS_NAMES:
        task = loop.create_task(coro, name="recorder")
    else:
        task = loop.create_task(coro)
    TASKS.append(task)
    loop.run_until_complete(task)


main()
