"""A target whose anyio cancel scopes lie (everything a target holds is
hostile).

Usage: hostile_anyio.py READY_FILE

A fake "anyio._backends._asyncio" module in sys.modules keeps a real
WeakKeyDictionary `_task_states`, as anyio's, of asyncio tasks each
waiting on a future, whose states lie:

- "looped": its scope is its own parent, due at NaN, with the str "yes"
  for a shield;
- "deep": a chain of 100 scopes, the k-th due at loop time + 5000 - k:
  only the first 64 are followed (ANYIO_MAX_SCOPES), so it times out at
  the 64th's (recorded in READY_FILE as "deep");
- "huge": due at 1e300 (no loop keeps that time);
- "str-deadline": due at the str "soon";
- "int-scope": its TaskState's cancel_scope is an int.

Writes {"pid": ..., "deep": ...} to READY_FILE once all are parked.
"""

import asyncio
import os
import sys
import types
import weakref

from _ready import write_ready


class TaskState(object):
    __slots__ = ("parent_id", "name", "cancel_scope")


class CancelScope(object):
    pass


def scope(deadline, parent=None, shield=False):
    s = CancelScope()
    s._deadline = deadline
    s._shield = shield
    s._parent_scope = parent
    s._cancel_called = False
    return s


fake = types.ModuleType("anyio._backends._asyncio")
fake._task_states = weakref.WeakKeyDictionary()
for name in ("anyio", "anyio._backends"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["anyio._backends._asyncio"] = fake


async def park(never):
    await never  # MARK: hostile-anyio-parked


async def main(ready):
    loop = asyncio.get_event_loop()
    never = loop.create_future()
    now = loop.time()
    looped = scope(float("nan"), shield="yes")
    looped._parent_scope = looped
    deep = None
    for k in reversed(range(100)):
        deep = scope(now + 5000.0 - k, parent=deep)
    states = {"looped": looped, "deep": deep, "huge": scope(1e300),
              "str-deadline": scope("soon"), "int-scope": 12345}
    tasks = []
    for name, cancel_scope in states.items():
        task = asyncio.ensure_future(park(never))
        if hasattr(task, "set_name"):
            task.set_name(name)
        state = TaskState()
        state.parent_id = None
        state.name = name
        state.cancel_scope = cancel_scope
        fake._task_states[task] = state
        tasks.append(task)
    await asyncio.sleep(0.1)
    write_ready(ready, {"pid": os.getpid(), "deep": now + 5000.0 - 63})
    await asyncio.gather(*tasks)


loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
loop.run_until_complete(main(sys.argv[1]))
