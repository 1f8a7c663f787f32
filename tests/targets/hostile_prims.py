"""A target whose synchronisation objects lie (issue 16: everything a
target holds is hostile).

Usage: hostile_prims.py READY_FILE

Fake "trio._sync", "anyio._core._synchronization" and "tornado.locks"
modules in sys.modules define classes named as the real ones, whose
fields are what no library would put there: a trio.Lock owned by an int
with a list for its parking lot, a trio.Event whose flag is a str and
whose tasks are a frozenset, an anyio.Lock owned by something whose id
is 2**70, a tornado.locks.Lock whose `_block` is itself and whose
__aexit__ says, as functools.wraps would, that it wraps itself, a real
threading.Condition whose _lock is itself, and two subclasses of
asyncio.Event, one named with control characters in a module of 3,007
characters (two bytes each, most), one whose __module__ is an int, one
named with 300 two-byte characters, and
an int subclass whose tp_mro points at an instance of itself, kept as
the `self` of a coroutine from trio's file.  Tasks
wait in coroutines compiled as if from those libraries' files (so that
`self` is taken for what they wait on), and one holds that tornado lock
in `async with`.  Writes {"pid": ...} to READY_FILE once all are
parked.
"""

import asyncio
import os
import sys
import threading
import types

from _ready import write_ready


def fake_module(name, **classes):
    mod = types.ModuleType(name)
    mod.__dict__.update(classes)
    sys.modules[name] = mod
    return mod


class Parked(object):
    pass


class TrioLock(object):
    def __init__(self):
        self._owner = 12345
        self._lot = Parked()
        self._lot._parked = [1, 2, 3]


class TrioEvent(object):
    def __init__(self):
        self._flag = "yes"
        self._tasks = frozenset([1, 2])


class AnyioLock(object):
    def __init__(self):
        owner = Parked()
        owner.id = 2 ** 70
        self._owner_task = owner
        self._waiters = "not a deque"


def wraps_itself(fn):
    async def wrapper(*args):
        return await fn(*args)
    wrapper.__name__ = fn.__name__
    wrapper.__wrapped__ = wrapper     # a loop for whoever follows it
    return wrapper


class TornadoLock(object):
    def __init__(self):
        self._block = self

    async def __aenter__(self):
        return self

    @wraps_itself
    async def __aexit__(self, *exc):
        return False


for name, mod, cls in (("Lock", "trio._sync", TrioLock),
                       ("Event", "trio._sync", TrioEvent),
                       ("Lock", "anyio._core._synchronization", AnyioLock),
                       ("Lock", "tornado.locks", TornadoLock)):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = mod
    fake_module(mod, **dict(sys.modules[mod].__dict__ if mod in sys.modules
                            else {}, **{name: cls}))

# A coroutine "wait" of each library's file: its `self` is the object.
SOURCE = "async def wait(self, never):\n    await never\n"


def waiter_from(path):
    ns = {}
    exec(compile(SOURCE, path, "exec"), ns)
    return ns["wait"]


# Names a class may have: control characters, any length, not a str.
EVIL_NAME = "Evil\x1b[2J\nEvent"
EVIL_MODULE = "mod\x07\u202e" + "\u00e9" * 3000
EvilEvent = type(EVIL_NAME, (asyncio.Event,), {"__module__": EVIL_MODULE})
IntModuleEvent = type("IntModuleEvent", (asyncio.Event,), {"__module__": 42})
LongNameEvent = type("Q" + "\u00e9" * 300, (asyncio.Event,), {"__module__": "m"})


async def wait_event(ev):
    await ev.wait()


class Poisoned(int):
    """Its type's tp_mro made to point at an instance of itself (by
    poison_mro()): a reader that asked what that "tuple" is would ask
    about Poisoned's MRO again, and again."""


POISONED = Poisoned(5)


def poison_mro():
    """Point Poisoned's tp_mro slot (the word of the type object that
    holds its __mro__ tuple) at POISONED; True once done.  Nothing looks
    an attribute up on Poisoned or POISONED afterwards."""
    import ctypes
    mro = id(Poisoned.__mro__)
    for i in range(2, 64):
        slot = ctypes.c_void_p.from_address(id(Poisoned) + 8 * i)
        if slot.value == mro:
            slot.value = id(POISONED)
            return True
    return False


def looped_condition():
    cond = threading.Condition()
    cond._lock = cond
    return cond


async def holds_looped(lock, never):
    async with lock:
        await never  # MARK: looped-parked


async def main(ready):
    never = asyncio.get_event_loop().create_future()
    objs = [(TrioLock(), "/x/trio/_sync.py"),
            (TrioEvent(), "/x/trio/_sync.py"),
            (AnyioLock(), "/x/anyio/_core/_synchronization.py"),
            (TornadoLock(), "/x/tornado/locks.py"),
            (looped_condition(), "/x/threading.py"),
            (POISONED, "/x/trio/_sync.py")]
    tasks = [asyncio.ensure_future(waiter_from(path)(obj, never))
             for obj, path in objs]
    tasks.append(asyncio.ensure_future(holds_looped(objs[3][0], never)))
    tasks += [asyncio.ensure_future(wait_event(cls()))
              for cls in (EvilEvent, IntModuleEvent, LongNameEvent)]
    await asyncio.sleep(0.1)
    write_ready(ready, {"pid": os.getpid(), "poisoned": poison_mro()})
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
