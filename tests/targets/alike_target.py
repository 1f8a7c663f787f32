"""A target for grouping alike tasks (tests/test_present.py).

Usage: alike_target.py READY_FILE COUNT

Tasks next to each other in the heap differ, so that a report that only
compares neighbours cannot get the groups right by luck:
- 2 x COUNT tasks park in turn at one of two lines of `parked_at()`
  (one code object): two groups of COUNT;
- 2 x COUNT tasks park in turn in one of two code objects compiled
  from the same text (same file name "<twin>", name and line, different
  objects): one group of 2 x COUNT.
The main task parks on a future; READY_FILE gets the pid once all are
parked.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import json
import os
import sys


async def parked_at(ev, which):
    if which:
        await ev.wait()  # MARK: alike-a
    else:
        await ev.wait()  # MARK: alike-b


TWIN_SOURCE = '''
async def twin(ev):
    await ev.wait()
'''


def twin_code():
    space = {}
    exec(compile(TWIN_SOURCE, "<twin>", "exec"), space)
    return space["twin"]


async def main(path, count):
    ev = asyncio.Event()
    twins = [twin_code(), twin_code()]
    assert twins[0].__code__ is not twins[1].__code__
    tasks = [asyncio.ensure_future(parked_at(ev, i % 2))
             for i in range(2 * count)]
    tasks += [asyncio.ensure_future(twins[i % 2](ev))
              for i in range(2 * count)]
    await asyncio.sleep(0.05)
    with open(path + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(path + ".tmp", path)
    fut = asyncio.get_event_loop().create_future()
    await fut  # MARK: alike-main
    return tasks


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(sys.argv[1], int(sys.argv[2])))
