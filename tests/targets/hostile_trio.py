"""A target whose trio tasks lie about their deadlines (everything a
target holds is hostile).

Usage: hostile_trio.py READY_FILE

A fake "trio._core._run" module in sys.modules defines Task, Runner,
SystemClock, CancelStatus and CancelScope as slots classes named as
trio's, and five tasks, each running a suspended coroutine:

- "looped": its cancel status is its own parent, its scope's deadline
  is NaN and its shield the str "yes";
- "deep": a chain of 100 cancel statuses, the k-th one's scope due at
  5000 - k: only the first TRIO_MAX_SCOPES (64) are followed, so its
  timeout is 4937 less its clock's offset (a SystemClock of 100.0);
- "huge": due at 1e300 (no clock keeps that), on a runner whose clock
  is a SystemClock with a str for its offset;
- "bad-sleep": parked in a coroutine compiled as if from trio's
  _timeouts.py, named sleep_until, whose local `deadline` is a str: no
  sleep read, and its innermost scope (due at 7000) is still the
  sleep's, no timeout;
- "not-status": its _cancel_status is an int.

Writes {"pid": ...} to READY_FILE once all are parked.
"""

import os
import sys
import types

from _ready import write_ready


class Task(object):
    __slots__ = ("name", "coro", "_parent_nursery", "_runner",
                 "_cancel_status")


class Runner(object):
    __slots__ = ("clock",)


class SystemClock(object):
    __slots__ = ("offset",)


class CancelStatus(object):
    __slots__ = ("_scope", "_parent", "effectively_cancelled")


class CancelScope(object):
    __slots__ = ("_deadline", "_shield")


run = types.ModuleType("trio._core._run")
for cls in (Task, Runner, SystemClock, CancelStatus, CancelScope):
    setattr(run, cls.__name__, cls)
for name in ("trio", "trio._core", "trio._core._run"):
    sys.modules[name] = run if name.endswith("_run") else \
        types.ModuleType(name)


@types.coroutine
def park():
    yield


async def parked():
    await park()  # MARK: hostile-trio-parked


SLEEP = ("async def sleep_until(deadline):\n"
         "    await park()\n")


def status(deadline, shield=False, parent=None):
    scope = CancelScope()
    scope._deadline = deadline
    scope._shield = shield
    s = CancelStatus()
    s._scope = scope
    s._parent = parent
    s.effectively_cancelled = False
    return s


def runner(offset):
    clock = SystemClock()
    clock.offset = offset
    r = Runner()
    r.clock = clock
    return r


def task(name, coro, cancel_status, run_by):
    coro.send(None)
    t = Task()
    t.name = name
    t.coro = coro
    t._parent_nursery = None
    t._runner = run_by
    t._cancel_status = cancel_status
    return t


def main(ready):
    good = runner(100.0)
    looped = status(float("nan"), shield="yes")
    looped._parent = looped
    deep = None
    for k in reversed(range(100)):
        deep = status(5000.0 - k, parent=deep)
    ns = {"park": park}
    exec(compile(SLEEP, "/usr/lib/python3/dist-packages/trio/_timeouts.py",
                 "exec"), ns)
    tasks = [
        task("looped", parked(), looped, good),
        task("deep", parked(), deep, good),
        task("huge", parked(), status(1e300), runner("offset")),
        task("bad-sleep", ns["sleep_until"]("soon"), status(7000.0), good),
        task("not-status", parked(), 12345, good),
    ]
    write_ready(ready, {"pid": os.getpid()})
    import time
    while tasks:
        time.sleep(3600)


main(sys.argv[1])
