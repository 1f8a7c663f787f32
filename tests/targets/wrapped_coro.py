"""Tasks whose coroutine is an object wrapping one (a class implementing
the coroutine protocol by hand): aiohttp's session.get() returns such an
object, keeping its coroutine in a slot `_coro`, and
asyncio.ensure_future() runs it as a task.  One wrapper does as aiohttp
does; the other keeps its coroutine under a name coroscope has no reason
to know.  Both tasks wait on a lock the main task holds.  A third task
runs an object that waits on a future by itself, with no coroutine
inside: a fourth task's wrapped coroutine awaits that future too, and
is that task's alone.

Usage: wrapped_coro.py READY_FILE.  The ready file holds, for each
wrapper task, its name and its chain as the interpreter sees it: id()
of each coroutine or generator from the wrapped one inwards.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import collections.abc
import sys

from _ready import write_ready


class Wrapper(collections.abc.Coroutine):
    """The protocol, driving the coroutine wrapped() gives."""
    __slots__ = ()

    def send(self, value):
        return self.wrapped().send(value)

    def throw(self, *exc):
        return self.wrapped().throw(*exc)

    def close(self):
        return self.wrapped().close()

    def __await__(self):
        return self.wrapped().__await__()


class SlotWrapper(Wrapper):
    __slots__ = ("_coro",)

    def __init__(self, coro):
        self._coro = coro

    def wrapped(self):
        return self._coro


class DictWrapper(Wrapper):
    def __init__(self, coro):
        self.inner = coro

    def wrapped(self):
        return self.inner


class Raw(Wrapper):
    """Yields a future itself: no generator anywhere."""

    def __init__(self, fut):
        self.it = fut.__await__()

    def wrapped(self):
        return self.it


async def on_future(fut):
    await fut  # MARK: shared-future


async def fetch(lock):
    async with lock:  # MARK: wrapped-wait
        pass


def chain(coro):
    """id() of coro and of each coroutine or generator it awaits."""
    out = []
    while coro is not None and len(out) < 64:
        if hasattr(coro, "cr_await"):
            out.append(id(coro))
            coro = coro.cr_await
        elif hasattr(coro, "gi_yieldfrom"):
            out.append(id(coro))
            coro = coro.gi_yieldfrom
        else:
            break
    return out


async def main(ready):
    lock = asyncio.Lock()
    async with lock:
        slot = SlotWrapper(fetch(lock))
        plain = DictWrapper(fetch(lock))
        shared = asyncio.get_event_loop().create_future()
        raw = asyncio.ensure_future(Raw(shared))
        on_shared = SlotWrapper(on_future(shared))
        tasks = [asyncio.ensure_future(slot), asyncio.ensure_future(plain),
                 asyncio.ensure_future(on_shared)]
        await asyncio.sleep(0.2)
        write_ready(ready, {"raw": id(raw), "tasks": [
            {"id": id(t), "chain": chain(w)}
            for t, w in zip(tasks, (slot._coro, plain.inner,
                                    on_shared._coro))]})
        await asyncio.Event().wait()


if __name__ == "__main__":
    if hasattr(asyncio, "run"):
        asyncio.run(main(sys.argv[1]))
    else:  # 3.6
        asyncio.get_event_loop().run_until_complete(main(sys.argv[1]))
