"""A task that raised, still referenced, and what waits for its work.

Usage: failed_task.py READY_FILE [queue|pytask|retrieved|hostile|crowd|
                                 fanout|group|group-many|anyio-group]

- queue: a producer task's json.loads() raises (in the json module);
  the consumer waits on its queue for ever; nothing awaits the producer,
  kept in a variable, so asyncio never logs its exception;
- pytask: the same, the producer a Python task (asyncio.tasks._PyTask);
- retrieved: gather(return_exceptions=True) of workers, one of which
  raises (gather asks for its exception) while the others wait on an
  Event nothing sets;
- hostile: the producer raises an exception whose class, module and
  message hold control characters and quotes, in a task so named;
- crowd: as queue, with 100 failed tasks whose exceptions were asked
  for (a server's handled failures, kept in a list) and 5 more whose
  exceptions nothing asked for, made before the producer;
- fanout: as queue, the consumer in gathers of gathers of one repeated
  future (gather(*[g] * 400), four deep): each gather lists its
  children, so a walk of them without memory does 400 ** 4 steps.
- group (3.11+): as queue, the producer a TaskGroup's owner whose
  children raise: a ValueError, and a TaskGroup of its own whose three
  children raise KeyErrors; the producer ends with an ExceptionGroup
  holding an ExceptionGroup, four exceptions in all.
- group-many (3.11+): as group, the TaskGroup's 100 children each
  raising a ValueError; beside it, a second failed task ("odd": its
  id()) whose ValueError has an `exceptions` attribute that is None and
  an `_exceptions` list of one KeyError: a group of that one;
- anyio-group: the same through anyio's task groups (Debian's anyio 3,
  whose groups are no BaseExceptionGroup but keep their exceptions in a
  list of their own).

READY_FILE gets, as JSON, "pid", and for the failed task "task" (its
id()), "name" (its get_name() from 3.8, else null), "retrieved" (its
_log_traceback, negated), "type" (its exception's class: __module__ and
__name__), "args" (the repr() of each of its args), "frames" (its
traceback's entries: file, line, co_name), once it has failed; with
retrieved, "gatherer" (the id() of the task awaiting the gather); with
group, "leaves": the exceptions in the group that are no group, in its
order (groups in it followed), each with "type", "args" and "frames".
"""

import asyncio
import json
import os
import sys
import traceback

if len(sys.argv) > 2 and sys.argv[2] == "anyio-group":
    import anyio

from _ready import write_ready

ready = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "queue"
loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)

Hostile = type("Bad\x1b[2J\"Err'\n", (Exception,),
               {"__module__": "mod\x07\nx"})


def describe_exception(exc):
    return {"type": [type(exc).__module__, type(exc).__name__],
            "args": [repr(a) for a in exc.args],
            "frames": [[f[0], f[1], f[2]] for f in
                       traceback.extract_tb(exc.__traceback__)]}


def leaves(group):
    # (anyio 3's groups are no BaseExceptionGroup, but keep a list of
    # exceptions all the same)
    for exc in group.exceptions:
        if isinstance(getattr(exc, "exceptions", None), (list, tuple)):
            yield from leaves(exc)
        else:
            yield exc


def describe(task):
    exc = task._exception
    name = task.get_name() if hasattr(task, "get_name") else None
    doc = {"pid": os.getpid(), "task": id(task), "name": name,
           "retrieved": not task._log_traceback}
    doc.update(describe_exception(exc))
    if mode in ("group", "group-many", "anyio-group"):
        doc["leaves"] = [describe_exception(e) for e in leaves(exc)]
    return doc


async def bad_value(n):
    raise ValueError("item %d" % n)  # MARK: group-value


async def bad_key(n):
    raise KeyError(n)  # MARK: group-key


async def inner_batch():
    async with asyncio.TaskGroup() as tg:
        for n in range(3):
            tg.create_task(bad_key(n))


async def batch_many(q):
    async with asyncio.TaskGroup() as tg:  # MARK: many-with
        for n in range(100):
            tg.create_task(bad_value(n))
    await q.put(1)


async def odd_group():
    e = ValueError("odd")
    e.exceptions = None
    e._exceptions = [KeyError(1)]
    raise e  # MARK: odd-raise


async def anyio_inner():
    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(bad_key, n)


async def anyio_batch(q):
    async with anyio.create_task_group() as tg:  # MARK: anyio-with
        tg.start_soon(bad_value, 1)
        tg.start_soon(anyio_inner)
    await q.put(1)


async def batch(q):
    # (each child raises at its first step: all fail before the
    # group's first failure cancels the others)
    async with asyncio.TaskGroup() as tg:  # MARK: group-with
        tg.create_task(bad_value(1))
        tg.create_task(inner_batch())
    await q.put(1)


async def producer(q):
    await asyncio.sleep(0.05)
    if mode == "hostile":
        raise Hostile("line\nnext\x1b[31m 'q' \"d\" \\", 7)  # MARK: hostile
    data = json.loads("{bad json")  # MARK: json
    await q.put(data)


async def consumer(q):
    while True:
        item = await q.get()  # MARK: get
        print(item)


async def fail(n):
    raise LookupError(n)


async def crowd():
    handled = [loop.create_task(fail(n)) for n in range(100)]
    silent = [loop.create_task(fail(-n)) for n in range(5)]
    await asyncio.wait(handled + silent)
    for t in handled:
        t.exception()
    return handled, silent


async def queue_main():
    kept = await crowd() if mode == "crowd" else None  # noqa: F841
    q = asyncio.Queue()
    if mode == "pytask":
        p = asyncio.tasks._PyTask(producer(q), loop=loop)
    elif mode == "group":
        p = loop.create_task(batch(q))
    elif mode == "group-many":
        p = loop.create_task(batch_many(q))
        odd = loop.create_task(odd_group())
    elif mode == "anyio-group":
        p = loop.create_task(anyio_batch(q))
    else:
        p = loop.create_task(producer(q))
    if mode == "hostile" and hasattr(p, "set_name"):
        p.set_name("prod\x1b]0;x\x07\n'")
    while not p.done():
        await asyncio.sleep(0.01)
    doc = describe(p)
    if mode == "group-many":
        doc["odd"] = id(odd)
    write_ready(ready, doc)
    if mode == "fanout":
        g = loop.create_task(consumer(q))
        for level in range(4):
            g = asyncio.gather(*[g] * 400)
        await g
    await consumer(q)


async def worker(n, event):
    if n == 1:
        raise RuntimeError("worker %d lost its connection" % n)  # MARK: lost
    await event.wait()


async def gather_main():
    event = asyncio.Event()
    tasks = [loop.create_task(worker(n, event)) for n in range(3)]
    gathered = asyncio.gather(*tasks, return_exceptions=True)
    while not tasks[1].done():
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.01)   # (gather's callback ran)
    doc = describe(tasks[1])
    current = getattr(asyncio, "current_task", None) or \
        asyncio.Task.current_task
    doc["gatherer"] = id(current())
    write_ready(ready, doc)
    await gathered


loop.run_until_complete(gather_main() if mode == "retrieved"
                        else queue_main())
