"""A target for coroscope's "second stack" tests: asyncio tasks and generators.

Usage: asyncio_target.py READY_FILE [--uvloop]

The main thread runs an event loop (uvloop's with --uvloop) whose first
task, the recorder, sets up one scenario per kind of await relation: a task
awaited by several tasks, gather, TaskGroup (3.11+), an async generator
parked in an await inside `async for`, generator-based coroutines chained
with `yield from`, an await cycle between two tasks, asyncio.wait, wait_for,
shield, wait_for of a gather and of a shield, a pure-Python task (asyncio.tasks._PyTask) and an eager task
(3.12+).  A second thread runs its own event loop with a few tasks; a
third thread is blocked inside a generator's body (so that generator is
"running").  Plain generators and coroutines live outside any task: a
three-deep `yield from` chain, a coroutine never awaited, closed ones and
three identical "twins".

Each parking line carries a "# MARK: name" comment.  Once everything is
parked the recorder writes what the process says about itself -- ids,
inspect states, lines, the cr_await / gi_yieldfrom / ag_await chains and,
from the target's own knowledge of the scenarios, who awaits whom -- to
READY_FILE as JSON (atomically), then parks itself in time.sleep() inside
its own coroutine, so it is the one running task and the main thread
sleeps.

Must run unchanged on CPython 3.6 through 3.14: no walrus, no match, no
f-strings, no positional-only parameters; features are guarded by version.
"""

import asyncio
import gc
import inspect
import json
import os
import platform
import sys
import threading
import time
import types

from _tids import native_tid

PY = sys.version_info[:2]
HAS_NAMES = PY >= (3, 8)
HAS_TASKGROUP = hasattr(asyncio, "TaskGroup")
HAS_EAGER = hasattr(asyncio, "eager_task_factory")
HAS_PYTASK = hasattr(asyncio.tasks, "_PyTask")

GEN_TYPES = {
    types.GeneratorType: "generator",
    types.CoroutineType: "coroutine",
    types.AsyncGeneratorType: "async_generator",
}

TASKS = {}          # role -> task
DONE_TASKS = {}     # role -> task that is done (must not be listed)
FUTS = {}           # role -> future that never completes
KEEP = {}           # role -> generator-like object kept alive
TWINS = []          # three identical suspended generators
AWAITS = []         # (waiter role, awaited role): the scenario's truth
SCENARIO = {}       # task role -> scenario name
_tids = {}          # threading.get_ident() -> native TID
_lock = threading.Lock()


def register_thread():
    with _lock:
        _tids[threading.get_ident()] = native_tid()


def spawn(loop, role, coro, scenario):
    if HAS_NAMES:
        task = loop.create_task(coro, name=role)
    else:
        task = loop.create_task(coro)
    TASKS[role] = task
    SCENARIO[role] = scenario
    return task


def awaits(waiter, awaited):
    AWAITS.append((waiter, awaited))


# ---------------------------------------------------------------------------
# Scenario bodies.  Every coroutine parks on a future that never completes.

async def leaf(tag, fut):
    await fut  # MARK: leaf-await


# A task awaited by several tasks.
async def shared_target(fut):
    await fut  # MARK: shared-target


async def shared_waiter(n):
    await TASKS["shared"]  # MARK: shared-waiter


# gather: the parent parks on a _GatheringFuture whose children are tasks.
async def gather_child(n, fut):
    await fut  # MARK: gather-child


async def gather_parent(fut):
    one, two = gather_child(1, fut), gather_child(2, fut)
    await asyncio.gather(one, two)  # MARK: gather-await


# TaskGroup (3.11+): the parent parks in TaskGroup.__aexit__.
async def tg_child(n, fut):
    await fut  # MARK: tg-child


async def tg_parent(fut):
    async with asyncio.TaskGroup() as tg:
        for n in (1, 2):
            role = "tg-child-%d" % n
            TASKS[role] = tg.create_task(tg_child(n, fut), name=role)
            SCENARIO[role] = "taskgroup"
            awaits("tg-parent", role)


# An async generator parked in an await while `async for` drives it.
async def ticker(label, fut):
    count = 0
    while True:
        count += 1
        yield count
        await fut  # MARK: agen-await


async def agen_consumer(fut):
    agen = ticker("agen", fut)
    KEEP["agen"] = agen
    async for value in agen:  # MARK: agen-for
        pass


# Generator-based coroutines in a task: coroutine -> generator -> generator.
@types.coroutine
def legacy_inner(fut):
    yield from fut  # MARK: legacy-inner


@types.coroutine
def legacy_outer(fut):
    yield from legacy_inner(fut)  # MARK: legacy-outer


async def legacy_task(fut):
    await legacy_outer(fut)  # MARK: legacy-await


# An await cycle: ping awaits pong, pong awaits ping.
async def ping():
    await TASKS["pong"]  # MARK: ping


async def pong():
    await TASKS["ping"]  # MARK: pong


# Awaited-by through asyncio.wait, wait_for and shield.
async def waiter_wait():
    await asyncio.wait([TASKS["wait-target"]])  # MARK: wait


async def waiter_wait_for():
    await asyncio.wait_for(TASKS["wait_for-target"], 3600)  # MARK: wait-for


async def waiter_shield():
    await asyncio.shield(TASKS["shield-target"])  # MARK: shield


# wait_for() around a gather or a shield: up to 3.11 the waiter awaits
# wait_for's own future, which a callback on the gather's (the shield's)
# future completes, one step from the children.
async def waiter_wait_for_gather():
    both = asyncio.gather(TASKS["wait_for_gather-target-1"],
                          TASKS["wait_for_gather-target-2"])
    await asyncio.wait_for(both, 3600)  # MARK: wait-for-gather


async def waiter_wait_for_shield():
    shielded = asyncio.shield(TASKS["wait_for_shield-target"])
    await asyncio.wait_for(shielded, 3600)  # MARK: wait-for-shield


# A C task awaiting a pure-Python task.
async def pytask_waiter():
    await TASKS["pytask"]  # MARK: pytask-waiter


async def eager_body(fut):
    await fut  # MARK: eager


async def quick():
    return 42


# The second loop, on its own thread.
async def side_sleeper():
    await asyncio.sleep(3600)  # MARK: side-sleep


async def side_main(ready_ev):
    loop = asyncio.get_event_loop()
    fut = loop.create_future()
    FUTS["side"] = fut
    spawn(loop, "side-child", leaf("side", fut), "side_loop")
    spawn(loop, "side-sleeper", side_sleeper(), "side_loop")
    awaits("side-main", "side-child")
    ready_ev.set()
    await TASKS["side-child"]  # MARK: side-main


def side_thread_main(ready_ev):
    register_thread()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    KEEP_LOOPS["side"] = loop
    LOOP_TID[id(loop)] = _tids[threading.get_ident()]
    task = spawn(loop, "side-main", side_main(ready_ev), "side_loop")
    loop.run_until_complete(task)


KEEP_LOOPS = {}
LOOP_TID = {}       # id(loop) -> native TID of the thread running it


# Plain generators and coroutines, outside any task.
def gen_level3(depth, label):
    yield depth  # MARK: gen3-yield


def gen_level2(depth, label):
    yield from gen_level3(depth + 1, label)  # MARK: gen2-yieldfrom


def gen_level1(label):
    yield from gen_level2(2, label)  # MARK: gen1-yieldfrom


def twin(n):
    yield n  # MARK: twin-yield


def closable(label):
    yield 1  # MARK: closable-yield
    yield 2


async def never_awaited(n, tag):  # MARK: never-awaited-def
    await asyncio.sleep(n)


def blocking_gen(started, gate):
    started.set()
    gate.wait()  # MARK: gen-running
    yield "done"


def gen_thread_main(gen):
    register_thread()
    next(gen)  # MARK: gen-thread-next


# ---------------------------------------------------------------------------
# Recording: what the process says about itself.

def state_of(obj):
    """inspect's state of a generator-like object, without the prefix."""
    if isinstance(obj, types.GeneratorType):
        state = inspect.getgeneratorstate(obj)
    elif isinstance(obj, types.CoroutineType):
        state = inspect.getcoroutinestate(obj)
    elif hasattr(inspect, "getasyncgenstate"):
        state = inspect.getasyncgenstate(obj)
    else:
        # inspect.getasyncgenstate (3.12) applied by hand: ag_running is
        # true while an asend/athrow is in progress (3.8+).
        if obj.ag_running:
            state = "AGEN_RUNNING"
        elif obj.ag_frame is None:
            state = "AGEN_CLOSED"
        elif obj.ag_frame.f_lasti <= (0 if PY >= (3, 11) else -1):
            state = "AGEN_CREATED"
        else:
            state = "AGEN_SUSPENDED"
    return state.split("_", 1)[1].lower()


def frame_of(obj):
    for attr in ("gi_frame", "cr_frame", "ag_frame"):
        if hasattr(obj, attr):
            return getattr(obj, attr)
    return None


def code_of(obj):
    for attr in ("gi_code", "cr_code", "ag_code"):
        if hasattr(obj, attr):
            return getattr(obj, attr)
    return None


def delegate_of(obj):
    """The raw gi_yieldfrom / cr_await / ag_await."""
    if isinstance(obj, types.GeneratorType):
        return obj.gi_yieldfrom
    if isinstance(obj, types.CoroutineType):
        return obj.cr_await
    if isinstance(obj, types.AsyncGeneratorType):
        return obj.ag_await
    return None


def unwrap(obj):
    """The contract's unwrapping: asend/athrow -> the async generator,
    _asyncio.FutureIter -> its future, anything else itself."""
    if obj is None:
        return None
    name = type(obj).__name__
    if name in ("async_generator_asend", "async_generator_athrow"):
        for ref in gc.get_referents(obj):
            if isinstance(ref, types.AsyncGeneratorType):
                return ref
        raise RuntimeError("no async generator behind %r" % (obj,))
    if name == "FutureIter":
        for ref in gc.get_referents(obj):
            if asyncio.isfuture(ref):
                return ref
        raise RuntimeError("no future behind %r" % (obj,))
    return obj


def chain_of(coro):
    """The task's await chain: generator-like objects, outermost first."""
    out, seen = [], set()
    obj = coro
    while type(obj) in GEN_TYPES and id(obj) not in seen and len(out) < 100:
        out.append(obj)
        seen.add(id(obj))
        obj = unwrap(delegate_of(obj))
    return out


def describe_value(value):
    info = {"type": type(value).__name__, "repr": repr(value), "id": id(value)}
    if type(value) in (str, bytes):
        info["len"] = len(value)
    return info


def frame_entry(obj):
    code = code_of(obj)
    frame = frame_of(obj)
    return {
        "id": id(obj),
        "kind": GEN_TYPES[type(obj)],
        "qualname": obj.__qualname__,
        "code_qualname": getattr(code, "co_qualname", None),
        "function": code.co_name,
        "file": code.co_filename,
        "line": frame.f_lineno if frame is not None else None,
    }


def task_coro(task):
    if hasattr(task, "get_coro"):
        return task.get_coro()
    return task._coro


def all_tasks_of(loop):
    if hasattr(asyncio, "all_tasks"):
        return list(asyncio.all_tasks(loop))
    return [t for t in asyncio.Task.all_tasks(loop) if not t.done()]


def snapshot(loops):
    """The ground truth, built without creating generators of our own."""
    role_of = {}
    for role in TASKS:
        role_of[id(TASKS[role])] = role
    found = {}
    for role in TASKS:
        found[id(TASKS[role])] = TASKS[role]
    for loop in loops.values():
        for t in all_tasks_of(loop):
            found[id(t)] = t

    owner = {}          # id(generator-like) -> id(task)
    tasks = []
    for ident in sorted(found):
        t = found[ident]
        if t.done():
            continue
        coro = task_coro(t)
        chain = chain_of(coro)
        for obj in chain:
            owner[id(obj)] = ident
        stack = []
        for obj in reversed(chain):
            stack.append(frame_entry(obj))
        waiter = t._fut_waiter
        role = role_of.get(ident, "unregistered")
        running = state_of(coro) == "running"
        tasks.append({
            "id": ident,
            "role": role,
            "scenario": SCENARIO.get(role),
            "name": t.get_name() if HAS_NAMES else coro.__qualname__,
            "state": "running" if running else "pending",
            "loop": id(t._loop),
            "thread": LOOP_TID.get(id(t._loop)),
            "coro": id(coro),
            "type": type(t).__module__ + "." + type(t).__name__,
            "stack": stack,
            "awaiting": None if waiter is None else {
                "id": id(waiter), "type": type(waiter).__name__},
            "awaited_by": [],
        })
    by_role = {}
    for entry in tasks:
        by_role[entry["role"]] = entry
    for waiter, awaited in AWAITS:
        by_role[awaited]["awaited_by"].append(by_role[waiter]["id"])

    keep_role = {}
    for role in KEEP:
        keep_role[id(KEEP[role])] = role
    for i in range(len(TWINS)):
        keep_role[id(TWINS[i])] = "twin"
    done_coros = {}
    for role in DONE_TASKS:
        done_coros[id(task_coro(DONE_TASKS[role]))] = id(DONE_TASKS[role])

    gens = []
    here = os.path.abspath(__file__)
    objects = gc.get_objects()
    for obj in objects:
        if type(obj) not in GEN_TYPES:
            continue
        entry = frame_entry(obj)
        del entry["code_qualname"]
        entry["state"] = state_of(obj)
        delegate = unwrap(delegate_of(obj))
        entry["awaiting"] = None if delegate is None else id(delegate)
        entry["awaiting_type"] = (None if delegate is None
                                  else type(delegate).__name__)
        entry["task"] = owner.get(id(obj))
        if id(obj) in done_coros:
            entry["done_task"] = done_coros[id(obj)]
        entry["role"] = keep_role.get(id(obj))
        frame = frame_of(obj)
        if entry["state"] != "running" and entry["file"] == here:
            values = {}
            if frame is not None:
                items = list(frame.f_locals.items())
                for name, value in items:
                    values[name] = describe_value(value)
            entry["locals"] = values
        gens.append(entry)
    del objects
    return tasks, gens


def write_ready(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


# ---------------------------------------------------------------------------
# Set-up, then the recorder parks.

def setup_main_scenarios(loop):
    def fut(role):
        FUTS[role] = loop.create_future()
        return FUTS[role]

    spawn(loop, "shared", shared_target(fut("shared")), "shared")
    for n in (1, 2, 3):
        role = "shared-waiter-%d" % n
        spawn(loop, role, shared_waiter(n), "shared")
        awaits(role, "shared")

    spawn(loop, "gather-parent", gather_parent(fut("gather")), "gather")

    if HAS_TASKGROUP:
        spawn(loop, "tg-parent", tg_parent(fut("tg")), "taskgroup")

    spawn(loop, "agen-consumer", agen_consumer(fut("agen")), "asyncgen")
    spawn(loop, "legacy", legacy_task(fut("legacy")), "legacy_chain")

    spawn(loop, "ping", ping(), "cycle")
    spawn(loop, "pong", pong(), "cycle")
    awaits("ping", "pong")
    awaits("pong", "ping")

    for kind in ("wait", "wait_for", "shield"):
        spawn(loop, kind + "-target", leaf(kind, fut(kind)), kind)
    spawn(loop, "wait-waiter", waiter_wait(), "wait")
    spawn(loop, "wait_for-waiter", waiter_wait_for(), "wait_for")
    spawn(loop, "shield-waiter", waiter_shield(), "shield")
    awaits("wait-waiter", "wait-target")
    awaits("wait_for-waiter", "wait_for-target")
    awaits("shield-waiter", "shield-target")
    for role in ("wait_for_gather-target-1", "wait_for_gather-target-2"):
        spawn(loop, role, leaf(role, fut(role)), "wait_for_gather")
        awaits("wait_for_gather-waiter", role)
    spawn(loop, "wait_for_gather-waiter", waiter_wait_for_gather(),
          "wait_for_gather")
    spawn(loop, "wait_for_shield-target",
          leaf("wait_for_shield", fut("wait_for_shield")), "wait_for_shield")
    spawn(loop, "wait_for_shield-waiter", waiter_wait_for_shield(),
          "wait_for_shield")
    awaits("wait_for_shield-waiter", "wait_for_shield-target")

    if HAS_PYTASK:
        coro = leaf("pytask", fut("pytask"))
        if HAS_NAMES:
            task = asyncio.tasks._PyTask(coro, loop=loop, name="pytask")
        else:
            task = asyncio.tasks._PyTask(coro, loop=loop)
        TASKS["pytask"] = task
        SCENARIO["pytask"] = "pytask"
        spawn(loop, "pytask-waiter", pytask_waiter(), "pytask")
        awaits("pytask-waiter", "pytask")

    if HAS_EAGER:
        TASKS["eager"] = asyncio.eager_task_factory(
            loop, eager_body(fut("eager")), name="eager")
        SCENARIO["eager"] = "eager"

    DONE_TASKS["done"] = loop.create_task(quick())
    DONE_TASKS["cancelled"] = loop.create_task(leaf("cancel", fut("cancel")))


def setup_plain_generators():
    chain = gen_level1("chain")
    next(chain)
    KEEP["chain"] = chain
    for n in range(3):
        g = twin(0)
        next(g)
        TWINS.append(g)
    KEEP["never"] = never_awaited(7, "x")
    closed = closable("closed")
    next(closed)
    closed.close()
    KEEP["closed"] = closed
    exhausted = closable("exhausted")
    for _ in exhausted:
        pass
    KEEP["exhausted"] = exhausted
    closed_coro = never_awaited(1, "closed")
    closed_coro.close()
    KEEP["closed-coro"] = closed_coro


async def recorder(loop, ready_path, use_uvloop):
    register_thread()
    LOOP_TID[id(loop)] = _tids[threading.get_ident()]
    setup_main_scenarios(loop)
    setup_plain_generators()

    side_ready = threading.Event()
    side = threading.Thread(target=side_thread_main, args=(side_ready,),
                            name="loop-thread")
    side.daemon = True
    side.start()

    started, gate = threading.Event(), threading.Event()
    KEEP["running"] = blocking_gen(started, gate)
    runner = threading.Thread(target=gen_thread_main,
                              args=(KEEP["running"],), name="gen-thread")
    runner.daemon = True
    runner.start()

    if not side_ready.wait(30) or not started.wait(30):
        sys.exit("a thread did not start")
    # Let every task run to its parking await (and the threads enter their
    # blocking calls); the cancelled task needs a step to finish.
    await asyncio.sleep(0.1)
    DONE_TASKS["cancelled"].cancel()
    await asyncio.sleep(0.3)

    # gather's children are created inside gather(): find them through the
    # parent's _GatheringFuture.
    gathering = TASKS["gather-parent"]._fut_waiter
    for n, child in enumerate(gathering._children, 1):
        role = "gather-child-%d" % n
        TASKS[role] = child
        SCENARIO[role] = "gather"
        awaits("gather-parent", role)

    side_loop = KEEP_LOOPS["side"]
    gc.collect()
    tasks, gens = snapshot({"main": loop, "side": side_loop})
    loop_type = type(loop)
    write_ready(ready_path, {
        "pid": os.getpid(),
        "version": platform.python_version(),
        "executable": sys.executable,
        "uvloop": use_uvloop,
        "loop_type": loop_type.__module__ + "." + loop_type.__name__,
        "main_file": os.path.abspath(__file__),
        "main_tid": _tids[threading.get_ident()],
        "side_tid": LOOP_TID[id(side_loop)],
        "gen_thread_tid": _tids.get(runner.ident),
        "loops": {"main": id(loop), "side": id(side_loop)},
        "features": {"names": HAS_NAMES, "taskgroup": HAS_TASKGROUP,
                     "eager": HAS_EAGER, "pytask": HAS_PYTASK},
        "tasks": tasks,
        "done_tasks": dict((r, id(t)) for r, t in DONE_TASKS.items()),
        "generators": gens,
        "futures": dict((r, id(f)) for r, f in FUTS.items()),
    })
    while True: time.sleep(3600)  # MARK: recorder-park


def main():
    ready_path = sys.argv[1]
    use_uvloop = "--uvloop" in sys.argv[2:]
    if use_uvloop:
        import uvloop
        loop = uvloop.new_event_loop()
    else:
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    coro = recorder(loop, ready_path, use_uvloop)
    if HAS_NAMES:
        task = loop.create_task(coro, name="recorder")
    else:
        task = loop.create_task(coro)
    TASKS["recorder"] = task
    SCENARIO["recorder"] = "recorder"
    loop.run_until_complete(task)  # MARK: main-run


main()
