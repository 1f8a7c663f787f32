"""The wait-for graph: who waits for what, who holds it, and cycles.

targets/graph_target.py parks threads and tasks in known waits (an
asyncio.Lock held across an await with two tasks behind it, threads
deadlocked on Locks and on RLocks, a lock taken with a bare acquire(),
each asyncio and threading primitive, an executor job blocked on a lock);
targets/trio_graph.py parks trio tasks on each of trio's primitives, and
targets/anyio_graph.py tasks on anyio's on both its backends, and
targets/tornado_locks.py on tornado's.
`coroscope dump --format json` must name the primitive, its state, its
holder at the line that entered the `with` block, and the cycles; the
text dump and `coroscope run` must say the same.  Lines come from the
target's "# MARK:" comments.
"""

import json
import os
import re
import subprocess

import pytest

from conftest import (DEBIAN, debian_with, interpreter_or_skip,
                      interpreters_importing,
                      marker_line, run_coroscope,
                      target_script)

SCRIPT = target_script("graph_target.py")


def ver(interp):
    return tuple(int(x) for x in interp.version.split(".")[:2])


def dump_json(keeper, interp, scenario):
    target = keeper.start_target(interp, "graph_target.py", scenario)
    res = run_coroscope("dump", "--format", "json", target.pid)
    assert res.returncode == 0, res
    return json.loads(res.stdout)["graph"], target


def named(graph, kind, name):
    for n in graph["nodes"]:
        if n["kind"] == kind and n.get("name") == name:
            return n
    raise AssertionError("no %s %r in %r" % (kind, name, graph["nodes"]))


def edges(graph, kind, frm=None, to=None):
    return [e for e in graph["edges"] if e["kind"] == kind and
            (frm is None or e["from"] == frm) and (to is None or e["to"] == to)]


def waits_for_object(graph, node):
    found = [e for e in edges(graph, "waits_for", frm=node["id"])
             if graph["nodes"][e["to"]]["kind"] == "object"]
    assert len(found) == 1, (node, graph["edges"])
    return found[0], graph["nodes"][found[0]["to"]]


def test_async_lock_holder(keeper, interp):
    graph, target = dump_json(keeper, interp, "alock")
    holder = named(graph, "task", "holder") if ver(interp) >= (3, 8) else None
    if holder is None:
        pytest.skip("task names (set_name) need Python 3.8+")
    held = edges(graph, "holds", frm=holder["id"])
    assert len(held) == 1, graph
    lock = graph["nodes"][held[0]["to"]]
    assert lock["type"] == "asyncio.Lock" and lock["locked"] is True
    assert lock["waiters"] == 2, lock
    # The holder is named where it is parked, inside the block, and the
    # `async with` that took the lock.
    assert held[0]["at"]["line"] == marker_line(SCRIPT, "holder-parked")
    assert held[0]["taken_line"] == marker_line(SCRIPT, "holder-takes")
    for name in ("waiter-1", "waiter-2"):
        w = named(graph, "task", name)
        edge, obj = waits_for_object(graph, w)
        assert obj["id"] == lock["id"]
        assert edge["state"] == "locked, 2 waiters"
        assert w["blame"]["line"] == marker_line(SCRIPT, "waiter"), w
        assert w["blame"]["file"].endswith("graph_target.py")
    text = run_coroscope("dump", target.pid).stdout
    assert ("waits for: asyncio.Lock 0x%x (locked, 2 waiters) held by task "
            "'holder' at graph_target.py:%d in holder (taken at line %d)\n"
            % (int(lock["address"], 16),
               marker_line(SCRIPT, "holder-parked"),
               marker_line(SCRIPT, "holder-takes"))) in text, text
    # the whole Holders line: where it took the lock said once
    assert ("\n  task 'holder' at graph_target.py:%d in holder holds "
            "asyncio.Lock 0x%x (locked, 2 waiters), taken at line %d: "
            "2 waiting\n" % (marker_line(SCRIPT, "holder-parked"),
                              int(lock["address"], 16),
                              marker_line(SCRIPT, "holder-takes"))) in text, \
        text
    # The task tree says it on the waiters' own line.
    assert ("waiter-1 .. waiter-2 pending, waits for asyncio.Lock (locked, "
            "2 waiters) held by task 'holder'\n") in text, text


def test_holders_through_generator_context_managers(keeper, interp):
    """A lock entered inside a @contextmanager / @asynccontextmanager
    generator is held by the thread or task whose `with` holds the
    manager (the generator is suspended at its yield, on no stack), also
    two managers deep; before, "holder unknown".  The holding place is
    the generator's yield.  So is one entered through an ExitStack
    (enter_context(), enter_async_context(), or acquired with its
    release() left to callback()), held by the frame whose `with` holds
    the stack, at the line where that frame is parked."""
    script = target_script("cm_holders.py")
    target, graph = graph_of_target(keeper, interp, "cm_holders.py")
    tids = target.ready["tids"]

    def thread(name):
        found = [n for n in graph["nodes"] if n["kind"] == "thread" and
                 n["tid"] == tids[name]]
        assert len(found) == 1, (name, graph["nodes"])
        return found[0]

    # (the holder, the lock's type, where it is held, where it was taken:
    # an ExitStack's manager, at no known line)
    want = [(thread("cm-holder"), "threading.Lock", "cm-yield", "cm-takes"),
            (thread("es-holder"), "threading.Lock", "es-parked", None),
            (thread("cb-holder"), "threading.Lock", "cb-parked", None)]
    if ver(interp) >= (3, 7):
        names = ("acm-holder", "acm-nested", "aes-holder") \
            if ver(interp) >= (3, 8) \
            else ("acm_holder", "acm_nested", "aes_holder")
        want += [(named(graph, "task", n), "asyncio.Lock") +
                 (("aes-parked", None) if n.startswith("aes") else
                  ("acm-yield", "acm-takes"))
                 for n in names]
    for node, typename, marker, takes in want:
        held = edges(graph, "holds", frm=node["id"])
        assert len(held) == 1, (node, held)
        lock = graph["nodes"][held[0]["to"]]
        assert lock["type"] == typename and lock["locked"] is True, lock
        assert lock["waiters"] in (1, None), lock
        assert held[0]["at"]["line"] == marker_line(script, marker), held
        assert held[0]["taken_line"] == \
            (takes and marker_line(script, takes)), held
        # and its waiter waits for it, held by that holder
        waiters = [e for e in edges(graph, "waits_for", to=lock["id"])]
        assert len(waiters) == 1, (lock, graph["edges"])
    # A lock whose release a stack's callback was given before its
    # acquire() blocked: held by the other thread only, no self-wait.
    for kind, typename in (("lock", "threading.Lock"),
                           ("rlock", "threading.RLock")):
        waiter, other = thread("cbfirst-" + kind), thread("other-" + kind)
        edge, lock = waits_for_object(graph, waiter)
        assert lock["type"] == typename, lock
        assert [h["from"] for h in edges(graph, "holds", to=lock["id"])] \
            == [other["id"]], graph["edges"]
        assert waiter["blame"]["line"] == marker_line(script, "cb-first")
        assert not [c for c in graph["cycles"] if waiter["id"] in c], \
            graph["cycles"]
    # An RLock a task holds across an await names the loop's thread its
    # owner: the task is its one holder (before, the thread too).
    if ver(interp) >= (3, 7):
        edge, lock = waits_for_object(graph, thread("rlock-waiter"))
        assert lock["type"] == "threading.RLock", lock
        holds = edges(graph, "holds", to=lock["id"])
        assert len(holds) == 1, (lock, graph["edges"])
        holder = graph["nodes"][holds[0]["from"]]
        assert holder["kind"] == "task", holder
        assert holds[0]["at"]["line"] == marker_line(script, "rlock-task")
        assert holds[0]["taken_line"] == marker_line(script, "rlock-takes")
        if ver(interp) >= (3, 8):
            assert holder["name"] == "rlock-task", holder
    # A stack that entered the lock, then acquire(): a true self-wait.
    me = thread("es-self")
    edge, lock = waits_for_object(graph, me)
    assert [h["from"] for h in edges(graph, "holds", to=lock["id"])] == \
        [me["id"]], graph["edges"]
    assert [c for c in graph["cycles"] if me["id"] in c], graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    assert "holder unknown" not in text, text


def test_thread_deadlocks(keeper, interp):
    graph, target = dump_json(keeper, interp, "threads")
    line = marker_line(SCRIPT, "crossed-blocked")
    doc = json.loads(run_coroscope("dump", "--format", "json",
                                   target.pid).stdout)
    idents = dict((t["name"], t["thread_id"]) for t in doc["threads"])
    for kind, typename in (("lock", "threading.Lock"),
                           ("rlock", "threading.RLock")):
        a = named(graph, "thread", kind + "-ab")
        b = named(graph, "thread", kind + "-ba")
        cyc = [c for c in graph["cycles"] if a["id"] in c and b["id"] in c]
        assert len(cyc) == 1, graph["cycles"]
        objs = [graph["nodes"][i] for i in cyc[0]
                if graph["nodes"][i]["kind"] == "object"]
        assert len(objs) == 2 and all(o["type"] == typename for o in objs)
        for t in (a, b):
            edge, obj = waits_for_object(graph, t)
            assert obj in objs
            holders = edges(graph, "holds", to=obj["id"])
            assert len(holders) == 1 and holders[0]["from"] in (a["id"], b["id"])
            assert holders[0]["from"] != t["id"]
            assert t["blame"]["line"] == line
            # taken at the outer `with` (an RLock entered three times)
            assert holders[0]["taken_line"] == \
                marker_line(SCRIPT, "crossed-takes"), holders
            # the state from the lock's own fields
            holder = graph["nodes"][holders[0]["from"]]
            assert obj["locked"] is True, obj
            if kind == "rlock":
                assert obj["owner"] == idents[holder["name"]], obj
                assert (obj["count"], edge["state"]) == \
                    (3, "locked, count 3"), obj
            else:
                assert edge["state"] == "locked", edge
    # Deadlocked in bare acquire() calls: each holds one lock in a
    # `with` and waits in second.acquire() for the other's.
    blocked = marker_line(SCRIPT, "acquire-blocked")
    for kind, typename in (("lock", "threading.Lock"),
                           ("rlock", "threading.RLock")):
        a = named(graph, "thread", "acq-%s-ab" % kind)
        b = named(graph, "thread", "acq-%s-ba" % kind)
        cyc = [c for c in graph["cycles"] if a["id"] in c and b["id"] in c]
        assert len(cyc) == 1, graph["cycles"]
        for t, other in ((a, b), (b, a)):
            edge, obj = waits_for_object(graph, t)
            assert obj["type"] == typename and obj["locked"] is True, obj
            holders = edges(graph, "holds", to=obj["id"])
            assert [h["from"] for h in holders] == [other["id"]], holders
            assert t["blame"]["line"] == blocked, t
            assert holders[0]["taken_line"] == \
                marker_line(SCRIPT, "acquire-takes"), holders
    # An acquire() that returned leaves the lock in its stack, and (up to
    # 3.12) a bound acquire the method itself: they wait for nothing, and
    # make no cycle with the thread that waits for the sleeper's lock.
    for name in ("acquired-sleeps", "stale-sleeps", "rlock-sleeps"):
        sleeper = named(graph, "thread", name)
        assert sleeper["blame"]["line"] == marker_line(SCRIPT, name), \
            sleeper
        assert edges(graph, "waits_for", frm=sleeper["id"]) == [], \
            (name, graph["edges"])
        assert not [c for c in graph["cycles"] if sleeper["id"] in c], \
            (name, graph["cycles"])
    # cond.acquire() waits for the Condition's lock; `with cond:` holds
    # the Condition, and so its lock too: a cycle.
    a = named(graph, "thread", "cond-then-lock")
    b = named(graph, "thread", "lock-then-cond")
    assert [c for c in graph["cycles"] if a["id"] in c and b["id"] in c], \
        graph["cycles"]
    edge, obj = waits_for_object(graph, b)
    assert obj["type"] == "threading.Lock" and obj["locked"] is True, obj
    assert [h["from"] for h in edges(graph, "holds", to=obj["id"])] == \
        [a["id"]], graph["edges"]
    assert b["blame"]["line"] == marker_line(SCRIPT, "lock-then-cond")
    # Where the live depth is known (3.14), the call is the topmost
    # acquire in the stack, not a bound one lower down that is a value.
    beside = named(graph, "thread", "beside-value")
    if ver(interp) >= (3, 14):
        edge, obj = waits_for_object(graph, beside)
        assert obj["type"] == "threading.Lock", obj
    # ExitStack.enter_context() calls the lock's __enter__ as a function
    # (from 3.13 with a NULL between it and the lock)
    entering = named(graph, "thread", "exit-stack")
    edge, obj = waits_for_object(graph, entering)
    assert obj["type"] == "threading.Lock" and obj["locked"] is True, obj
    assert entering["blame"]["line"] == marker_line(SCRIPT, "exit-stack")
    theirs = named(graph, "thread", "takes-theirs")
    edge, obj = waits_for_object(graph, theirs)
    assert [h["from"] for h in edges(graph, "holds", to=obj["id"])] == \
        [named(graph, "thread", "stale-sleeps")["id"]]
    bare = named(graph, "thread", "bare-waiter")
    edge, obj = waits_for_object(graph, bare)
    assert obj["type"] == "threading.Lock" and obj["locked"] is True
    assert edges(graph, "holds", to=obj["id"]) == []
    text = run_coroscope("dump", target.pid).stdout
    assert ("threading.Lock 0x%x (locked) holder unknown"
            % int(obj["address"], 16)) in text, text
    # The Condition's holder holds its lock too: one line for both, with
    # the lock's waiter (before, two lines, "0 waiting" on the first).
    cond_holds = [l for l in text.splitlines()
                  if "(cond-then-lock) at " in l and " holds " in l]
    assert len(cond_holds) == 1, text
    assert re.search(r" holds threading\.Condition 0x[0-9a-f]+ \(locked, "
                     r"0 waiters\) and its threading\.Lock 0x[0-9a-f]+ "
                     r"\(locked\), taken at line %d: 1 waiting$"
                     % marker_line(SCRIPT, "cond-takes"), cond_holds[0]), \
        cond_holds


PRIMS = [
    # (node kind, name, type, state, marker)
    ("task", "a-event", "asyncio.Event", "not set, 1 waiter", "a-event"),
    ("task", "a-sem", "asyncio.Semaphore", "value 0, 1 waiter", "a-sem"),
    ("task", "a-get", "asyncio.Queue", "qsize 0, 1 waiter", "a-get"),
    ("task", "a-put", "asyncio.Queue", "qsize 1 of maxsize 1, 1 waiter",
     "a-put"),
    ("task", "a-cond", "asyncio.Condition", "unlocked, 1 waiter", "a-cond"),
    # notified: no longer the Condition's waiter as asyncio counts them,
    # but its lock's, which its notifier holds
    ("task", "a-cond-notified", "asyncio.Condition",
     "locked, 0 waiters, 1 waiting for its lock", "a-cond-notified"),
    ("task", "a-barrier", "asyncio.Barrier", "1 of 2 parties, 1 waiter",
     "a-barrier"),
    ("thread", "t_event", "threading.Event", "not set, 1 waiter", "t-event"),
    ("thread", "t_sem", "threading.Semaphore", "value 0, 1 waiter", "t-sem"),
    ("thread", "t_get", "queue.Queue", "qsize 0, 1 waiter", "t-get"),
    ("thread", "t_put", "queue.Queue", "qsize 1 of maxsize 1, 1 waiter",
     "t-put"),
    ("thread", "t_cond", "threading.Condition", "unlocked, 1 waiter",
     "t-cond"),
    ("thread", "t_barrier", "threading.Barrier", "1 of 2 parties, 1 waiter",
     "t-barrier"),
]


def test_primitives(keeper, interp):
    if ver(interp) < (3, 8):
        pytest.skip("task names (set_name) need Python 3.8+")
    graph, target = dump_json(keeper, interp, "prims")
    for kind, name, typename, state, marker in PRIMS:
        if name == "a-barrier" and ver(interp) < (3, 11):
            continue
        node = named(graph, kind, name)
        edge, obj = waits_for_object(graph, node)
        assert (obj["type"], edge["state"]) == (typename, state), (name, edge)
        assert node["blame"]["line"] == marker_line(SCRIPT, marker), node
        assert "class" not in obj, obj
    # A Condition's waiter has given the lock up: no self-cycle.
    assert graph["cycles"] == [], graph["cycles"]
    # Subclasses: the family's type, and the class as the interpreter
    # names it, in JSON and in the text.
    text = run_coroscope("dump", target.pid).stdout
    for name, cls in sorted(target.ready["classes"].items()):
        node = named(graph, "task" if name.startswith("a-") else "thread",
                     name)
        edge, obj = waits_for_object(graph, node)
        family = PRIM_FAMILY[name]
        assert (obj["type"], obj["class"]) == (family, cls), (name, obj)
        assert node["blame"]["line"] == \
            marker_line(SCRIPT, "t-event" if name in ("t_own", "t_mixed") else
                        "a-get" if name.startswith("a-") else "t-get"), node
        assert ("waits for: %s 0x%x (" % (cls, int(obj["address"], 16))
                in text), (name, text)
    # Alike tasks waiting on queues of five classes: their group's line
    # speaks for its first (the versions order them differently).
    group = [re.search(r"tasks like this: (\S+) \.\. .* the first waits "
                       r"for (\S+) \(", l) for l in text.splitlines()
             if "tasks like this: a-" in l and "like this: a-q" not in l]
    assert len(group) == 1 and group[0], text
    first, cls = group[0].groups()
    assert cls == target.ready["classes"].get(first, "asyncio.Queue"), text
    # and two on two queues of one class (in either order): the first too
    assert [l for l in text.splitlines()
            if re.search(r"2 tasks like this: a-q[12] \.\. a-q[12] pending, "
                         r"the first waits for asyncio\.Queue \(qsize 0, "
                         r"1 waiter\)", l)], text


PRIM_FAMILY = {"a-prio": "asyncio.Queue", "a-lifo": "asyncio.Queue",
               "a-own": "asyncio.Queue", "a-mixed": "asyncio.Queue",
               "t_prio": "queue.Queue", "t_lifo": "queue.Queue",
               "t_own": "threading.Event", "t_mixed": "threading.Event"}


def test_wait_for_the_first_of(keeper, interp):
    """asyncio.wait(FIRST_COMPLETED) waits for the first of its tasks:
    "any" edges.  A task holding the lock one child waits for is no
    deadlock while the other child may end its wait; with ALL_COMPLETED,
    or when both children wait for that lock, it is one, a cycle.  A
    TaskGroup's child beside such a wait is no choice: a plain edge; a
    plain future among the choices may end it: no cycle.
    An await cycle through such a wait is one only when the other child
    awaits the waiter too."""
    if ver(interp) < (3, 8):
        pytest.skip("task names (set_name) need Python 3.8+")
    graph, target = dump_json(keeper, interp, "first_of")
    cycles = [set(c) for c in graph["cycles"]]
    for mode, anyof, deadlock in (("first", True, False),
                                  ("all", False, True),
                                  ("both", True, True)):
        holder = named(graph, "task", mode + "-holder")
        assert holder["blame"]["line"] == \
            marker_line(SCRIPT, "holder-waits"), holder
        out = edges(graph, "waits_for", frm=holder["id"])
        kids = dict((graph["nodes"][e["to"]]["name"], e.get("any", False))
                    for e in out)
        assert kids == {mode + "-take": anyof, mode + "-other": anyof}, out
        kid_ids = set(named(graph, "task", mode + k)["id"]
                      for k in ("-take", "-other"))
        mine = [c for c in cycles if holder["id"] in c]
        assert len(mine) == int(deadlock), (mode, graph["cycles"])
        assert not deadlock or mine[0] & kid_ids, graph["cycles"]
    # one choice a task, the other a plain future (no node): still a
    # choice that may end the wait, so no cycle
    holder = named(graph, "task", "fut-holder")
    out = edges(graph, "waits_for", frm=holder["id"])
    assert [(graph["nodes"][e["to"]].get("name"), e.get("any"))
            for e in out] == [("fut-take", True)], out
    assert not [c for c in cycles if holder["id"] in c], graph["cycles"]
    if ver(interp) >= (3, 11):
        holder = named(graph, "task", "tg-holder")
        out = edges(graph, "waits_for", frm=holder["id"])
        kids = dict((graph["nodes"][e["to"]].get("name"), e.get("any"))
                    for e in out if graph["nodes"][e["to"]]["kind"] == "task")
        assert kids == {"tg-sleeper": None, "tg-take": None}, out
        assert [c for c in cycles if holder["id"] in c and
                named(graph, "task", "tg-take")["id"] in c], graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    assert re.search(r"waits for the first of: task 'first-(take|other)' "
                     r".*; or: task 'first-(take|other)'", text), text
    assert "; and for: task 'all-" in text, text
    # await cycles (their tasks' ids), as JSON and text give them
    doc = json.loads(run_coroscope("dump", "--format", "json",
                                   target.pid).stdout)
    names = dict((t["id"], t["name"]) for t in doc["tasks"])
    awaits = [sorted(names[i] for i in c) for c in doc["await_cycles"]]
    assert ["cyc-a", "cyc-w"] not in awaits, awaits
    assert [c for c in awaits if "cyc2-w" in c], awaits
    # each child is awaited by the waiter alone (3.14's wait() keeps the
    # waiter in its callback's closure: not a future the other awaits)
    for t in doc["tasks"]:
        if t["name"] in ("cyc2-a", "cyc2-b"):
            assert [names.get(i) for i in t["awaited_by"]] == ["cyc2-w"], t
    assert not [l for l in text.splitlines()
                if l.startswith("await cycle") and "cyc-w" in l], text


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_a_wide_wait_names_five(keeper, ident):
    """A task waiting on many (asyncio.wait() of 12 here; a TaskGroup of
    20,000 made one Waits line of 1.9 MB in a helper's user round): its
    line names the first five, then counts the rest ("; and for 7 more",
    "; or 7 more" for the first of); the graph keeps every edge."""
    target, graph = graph_of_target(keeper, interpreter_or_skip(ident),
                                    "wide_waits.py")
    width = target.ready["width"]
    script = target_script("wide_waits.py")
    text = run_coroscope("dump", target.pid).stdout
    rows = [l for l in text.splitlines()
            if l.startswith("    waits for") and "wide_waits.py:%d in child"
            % marker_line(script, "child") in l]
    ends = sorted(re.search(r"; ((?:and for |or )\d+ more)$", l).group(1)
                  for l in rows if re.search(r" more$", l))
    assert ends == ["and for %d more" % (width - 5),
                    "or %d more" % (width - 5)], rows
    for l in rows:
        if l.endswith(" more"):
            assert l.count("task '") == 5, l
    waiters = [n for n in graph["nodes"] if n["kind"] == "task" and
               n.get("blame") and n["blame"]["line"] ==
               marker_line(script, "wait")]
    assert len(waiters) == 2, graph["nodes"]
    for w in waiters:
        assert len(edges(graph, "waits_for", frm=w["id"])) == width, w


@pytest.mark.parametrize("ident", ("3.7", "3.12"))
def test_alike_tasks_holding_other_locks_are_apart(keeper, ident):
    """Two transfer()s deadlocked, each holding the lock the other waits
    for, were one entry of the task tree, "2 tasks like this: transfer ..
    transfer pending, the first waits for asyncio.Lock ... held by task
    'transfer'", which read as one task waiting on itself (a helper's
    user round).  Tasks alike but holding different objects are apart
    now; alike ones holding the same Semaphore stay one entry."""
    target = keeper.start_target(interpreter_or_skip(ident),
                                 "alike_holders.py")
    text = run_coroscope("dump", target.pid).stdout
    tree = [l for l in text.splitlines() if "(T) " in l]
    assert not [l for l in tree if "tasks like this" in l and
                "waits for asyncio.Lock" in l], text
    assert len([l for l in tree if "waits for asyncio.Lock (locked, 1 "
                "waiter) held by task " in l]) == 2, text
    assert len([l for l in tree if re.search(
        r"\(T\) 3 tasks like this: .* pending, waits for asyncio\.Event",
        l)]) == 1, text


def test_executor_chain(keeper, interp):
    graph, target = dump_json(keeper, interp, "to_thread")
    worker = [n for n in graph["nodes"] if n["kind"] == "thread" and
              n["blame"] and n["blame"]["function"] == "blocked_work"]
    assert len(worker) == 1, graph["nodes"]
    edge, obj = waits_for_object(graph, worker[0])
    keeper_node = named(graph, "thread", "keeper")
    assert [e["from"] for e in edges(graph, "holds", to=obj["id"])] == \
        [keeper_node["id"]]
    # The task waits for the concurrent future its awaitable is chained
    # to, and that future for the worker thread running its job.
    cf = [n for n in graph["nodes"] if n.get("type") ==
          "concurrent.futures.Future"]
    assert len(cf) == 1, graph["nodes"]
    assert cf[0]["state"] == "running", cf
    assert edges(graph, "waits_for", frm=cf[0]["id"], to=worker[0]["id"])
    if ver(interp) >= (3, 8):
        offload = named(graph, "task", "offload")
        assert edges(graph, "waits_for", frm=offload["id"],
                     to=cf[0]["id"]), graph["edges"]


def test_run_ranks_the_holder_first(keeper, tmp_path):
    py = "/usr/bin/python3.11"
    if not os.path.exists(py):
        pytest.skip("Debian's python3.11 is not installed")
    ready = tmp_path / "ready.json"
    res = subprocess.run([os.environ.get("COROSCOPE", "coroscope"), "run",
                          "--timeout", "2", "--", py, SCRIPT, str(ready),
                          "alock"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=60)
    assert res.returncode == 124, res.stderr
    lines = res.stderr.splitlines()
    first = lines.index("coroscope: likely cause, most likely first:") + 1
    line = marker_line(SCRIPT, "holder-parked")
    assert "2 waiting on asyncio.Lock" in lines[first], lines[first]
    assert ("held by task 'holder' at graph_target.py:%d in holder" % line) \
        in lines[first], lines[first]




def coroscope_run(argv, cwd, timeout="3"):
    res = subprocess.run([os.environ.get("COROSCOPE", "coroscope"), "run",
                          "--timeout", timeout, "--"] + argv, cwd=str(cwd),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=90)
    assert res.returncode == 124, res.stderr[-4000:]
    lines = res.stderr.splitlines()
    head = "coroscope: likely cause, most likely first:"
    if head not in lines:
        return []
    out = []
    for line in lines[lines.index(head) + 1:]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("test,marker,function", [
    ("test_hangs", "test-hang", "test_hangs"),
    ("test_with_stuck_fixture", "fixture-hang", "stuck_fixture"),
])
def test_pytest_asyncio_hang(tmp_path, test, marker, function):
    debian_with("pytest", "pytest_asyncio")
    suite = target_script("graph_pytest_suite.py")
    with open(suite) as src, open(str(tmp_path / "graph_pytest_suite.py"),
                                  "w") as dst:
        dst.write(src.read())
    node = "graph_pytest_suite.py::" + test
    causes = coroscope_run([DEBIAN, "-m", "pytest", "-q", "-p",
                            "no:cacheprovider", node], tmp_path, timeout="4")
    assert causes, "no likely cause"
    assert "1 waiting on asyncio.Event" in causes[0], causes
    place = "graph_pytest_suite.py:%d in %s" % (marker_line(suite, marker),
                                                function)
    assert any(place in c for c in causes[1:3]), causes
    assert any(c.strip() == "test being run: " + node for c in causes), causes
    # The graph explains the task: no vaguer "stuck task" cause.
    assert not any("stuck task:" in c for c in causes), causes


def test_uvicorn_idle_is_not_stuck(tmp_path):
    debian_with("uvicorn", "starlette")
    app = target_script("graph_uvicorn_app.py")
    causes = coroscope_run([DEBIAN, app, str(tmp_path / "ready.json")],
                           tmp_path, timeout="4")
    heads = [c for c in causes if not c.startswith("    ")]
    assert heads, "the lifespan wait should be listed as idle"
    assert all(": idle: " in h for h in heads), causes


def ask_app(target, path, times):
    """GET path of graph_uvicorn_app.py, times at once, from threads that
    end with the test (the requests never get an answer)."""
    ask_port(target.ready["port"], path, times)


def ask_port(port, path, times):
    import threading
    import urllib.request
    url = "http://127.0.0.1:%d%s" % (port, path)

    def ask():
        try:
            urllib.request.urlopen(url, timeout=30)
        except Exception:
            pass
    for _ in range(times):
        threading.Thread(target=ask, daemon=True).start()


def test_uvicorn_stuck_handler(keeper):
    debian_with("uvicorn", "starlette")
    app = target_script("graph_uvicorn_app.py")
    target = keeper.start_target(DEBIAN, "graph_uvicorn_app.py")
    ask_app(target, "/stuck", 1)
    line = marker_line(app, "handler-stuck")
    text = ""
    for _ in range(100):
        text = run_coroscope("dump", target.pid).stdout
        if "asyncio.Event" in text:
            break
    assert ("at graph_uvicorn_app.py:%d in stuck" % line) in text, text
    assert "waits for: asyncio.Event" in text, text


def test_uvicorn_sync_handlers_use_up_the_thread_limiter(keeper):
    """starlette runs a plain handler in anyio's worker threads, one
    token of anyio's thread limiter each (cut to two by the app): with
    both handlers parked, the third request's task waits for the
    anyio.CapacityLimiter, held by the two requests' tasks, each waiting
    for the worker thread that runs its handler, and the two threads
    wait on the handler's threading.Event."""
    debian_with("uvicorn", "starlette", "anyio")
    app = target_script("graph_uvicorn_app.py")
    target = keeper.start_target(DEBIAN, "graph_uvicorn_app.py")
    ask_app(target, "/sync", 3)
    line = marker_line(app, "handler-sync")

    def parked(graph):
        return [n for n in graph["nodes"] if n["kind"] == "thread" and
                n["blame"] and n["blame"]["line"] == line]

    graph = None
    for _ in range(100):
        graph = json.loads(run_coroscope("dump", "--format", "json",
                                         target.pid).stdout)["graph"]
        limiters = [n for n in graph["nodes"]
                    if n.get("type") == "anyio.CapacityLimiter"]
        held = edges(graph, "holds", to=limiters[0]["id"]) \
            if limiters else []
        # settled: the third request waits, neither holder is running
        # on the loop's thread as it was stopped (then the thread, whose
        # frames they are, holds it for that instant), and both worker
        # threads wait in the handler (a token is taken before its
        # thread starts the handler)
        if limiters and limiters[0]["waiters"] == 1 and len(held) == 2 \
                and all(graph["nodes"][e["from"]]["kind"] == "task"
                        for e in held) and len(parked(graph)) == 2 \
                and any(n.get("type") == "threading.Event" and
                        n["waiters"] == 2 for n in graph["nodes"]):
            break
    else:
        pytest.fail("the third request never waited: %r" % graph)
    waiting = edges(graph, "waits_for", to=limiters[0]["id"])
    assert len(waiting) == 1 and waiting[0]["state"] == \
        "value 0, 1 waiter", waiting
    holders = [graph["nodes"][e["from"]]
               for e in edges(graph, "holds", to=limiters[0]["id"])]
    assert all(h["kind"] == "task" for h in holders), holders
    assert graph["nodes"][waiting[0]["from"]] not in holders
    threads = parked(graph)
    assert len(threads) == 2, graph["nodes"]
    for t in threads:
        edge, obj = waits_for_object(graph, t)
        assert (obj["type"], edge["state"]) == \
            ("threading.Event", "not set, 2 waiters"), edge
    # each holder waits for the worker thread running its handler
    ran = sorted(e["to"] for h in holders
                 for e in edges(graph, "waits_for", frm=h["id"]))
    assert ran == sorted(t["id"] for t in threads), (holders, threads)

def test_aiohttp_handlers_behind_a_lock(keeper):
    """An aiohttp app: one request's handler holds an asyncio.Lock while
    it waits for an Event; two more requests' handlers wait for the
    Lock, held by the first request's task at the handler's line."""
    debian_with("aiohttp")
    app = target_script("graph_aiohttp_app.py")
    target = keeper.start_target(DEBIAN, "graph_aiohttp_app.py")
    hold, take = (marker_line(app, m) for m in ("aiohttp-hold",
                                                 "aiohttp-take"))

    def graph_when(ready):
        for _ in range(100):
            graph = json.loads(run_coroscope("dump", "--format", "json",
                                             target.pid).stdout)["graph"]
            if ready(graph):
                return graph
        pytest.fail("never: %r" % graph)

    def lock_of(graph):
        locks = [n for n in graph["nodes"]
                 if n.get("type") == "asyncio.Lock"]
        return locks[0] if locks else None
    ask_app(target, "/hold", 1)
    graph_when(lambda g: lock_of(g) and lock_of(g)["locked"])
    ask_app(target, "/take", 2)
    graph = graph_when(lambda g: lock_of(g)["waiters"] == 2)
    lock = lock_of(graph)
    waiting = [graph["nodes"][e["from"]]
               for e in edges(graph, "waits_for", to=lock["id"])]
    assert sorted(w["blame"]["line"] for w in waiting) == [take, take], \
        waiting
    held = edges(graph, "holds", to=lock["id"])
    assert len(held) == 1 and held[0]["at"]["line"] == hold, held
    holder = graph["nodes"][held[0]["from"]]
    assert holder["kind"] == "task" and holder["blame"]["line"] == hold
    edge, obj = waits_for_object(graph, holder)
    assert (obj["type"], edge["state"]) == \
        ("asyncio.Event", "not set, 1 waiter"), edge

def test_aiohttp_connection_pool_run_out(keeper):
    """aiohttp's connector with no connection free: the requests queued
    for one wait for the connector, in the state its own fields give,
    held by the tasks whose requests use its connections; a task that
    keeps a response open in `async with` (or in a local, never
    released) and asks the same session for another connection holds it
    and waits for it: a cycle."""
    debian_with("aiohttp")
    script = target_script("aiohttp_pool.py")
    target, graph = graph_of_target(keeper, DEBIAN, "aiohttp_pool.py")
    said = target.ready
    conns = {}
    for key, waiter in (("pool", "queued-1"), ("single", "nested"),
                        ("leaky", "leaker"), ("perhost", "keeper")):
        edge, obj = waits_for_object(graph, named(graph, "task", waiter))
        assert (obj["type"], obj["class"]) == \
            ("aiohttp.BaseConnector", "aiohttp.TCPConnector"), obj
        want = said[key]
        assert (obj["in_use"], obj["limit"], obj["waiters"]) == \
            (want["in_use"], want["limit"], want["waiters"]), (obj, want)
        if want["limit"]:
            assert edge["state"] == "%d in use of limit %d, %d waiter%s" % (
                want["in_use"], want["limit"], want["waiters"],
                "" if want["waiters"] == 1 else "s"), edge
        conns[key] = obj
    fetch = marker_line(script, "pool-fetch")
    pool = conns["pool"]
    waiting = [graph["nodes"][e["from"]]
               for e in edges(graph, "waits_for", to=pool["id"])]
    assert sorted(w["name"] for w in waiting) == ["queued-1", "queued-2"]
    assert all(w["blame"]["line"] == fetch for w in waiting), waiting
    held = edges(graph, "holds", to=pool["id"])
    holders = sorted(graph["nodes"][e["from"]]["name"] for e in held)
    assert holders == ["slow-1", "slow-2"], held
    assert all(graph["nodes"][e["from"]]["blame"]["line"] == fetch
               for e in held), held
    # the nested request: it holds the one connection at the outer
    # `async with`, and waits for another
    single, nested = conns["single"], named(graph, "task", "nested")
    held = edges(graph, "holds", to=single["id"])
    assert [e["from"] for e in held] == [nested["id"]], held
    assert (held[0]["at"]["line"], held[0]["taken_line"]) == \
        (marker_line(script, "nested-inner"),
         marker_line(script, "nested-outer")), held
    assert [c for c in graph["cycles"]
            if nested["id"] in c and single["id"] in c], graph["cycles"]
    # a limit per host: the waiter for the second host waits for the
    # task using that host's connection, not for its own response of
    # the first host
    perhost, keeper = conns["perhost"], named(graph, "task", "keeper")
    held = edges(graph, "holds", to=perhost["id"])
    assert [graph["nodes"][e["from"]]["name"] for e in held] == \
        ["host-b"], held
    assert not [c for c in graph["cycles"] if keeper["id"] in c], \
        graph["cycles"]
    # a response kept in a local holds its connection, at the line its
    # frame is at (where it was taken is not known)
    leaky, leaker = conns["leaky"], named(graph, "task", "leaker")
    held = edges(graph, "holds", to=leaky["id"])
    assert [e["from"] for e in held] == [leaker["id"]], held
    assert (held[0]["at"]["line"], held[0]["taken_line"]) == \
        (marker_line(script, "leak-inner"), None), held
    assert [c for c in graph["cycles"]
            if leaker["id"] in c and leaky["id"] in c], graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    assert re.search(r"waits for: aiohttp\.TCPConnector 0x[0-9a-f]+ \(2 in "
                     r"use of limit 2, 2 waiters\) held by task 'slow-[12]' "
                     r"at aiohttp_pool\.py:%d in fetch" % fetch, text), text
    assert "task 'nested' -> aiohttp.TCPConnector 0x%x (1 in use of " \
        "limit 1, 1 waiter) -> task 'nested'" % int(single["address"], 16) \
        in text, text


def test_run_blames_the_handlers_not_the_requests(tmp_path):
    """`coroscope run` on the app with two plain handlers parked and a
    third request queued: the threading.Event the handlers' threads wait
    on leads, then the anyio.CapacityLimiter and its holders; the
    requests' tasks waiting for those threads are no "stuck task" of
    their own."""
    debian_with("uvicorn", "starlette", "anyio")
    import threading
    import time
    app = target_script("graph_uvicorn_app.py")
    ready = tmp_path / "ready.json"

    def ask_when_ready():
        for _ in range(400):
            if ready.exists():
                ask_port(json.loads(ready.read_text())["port"], "/sync", 3)
                return
            time.sleep(0.025)
    threading.Thread(target=ask_when_ready, daemon=True).start()
    # (10 s: under load, with six test workers on two cores, uvicorn's
    # start took most of 5 s once, and the requests came after the dump)
    causes = coroscope_run([DEBIAN, app, str(ready)], tmp_path,
                           timeout="10")
    heads = [c for c in causes if c.startswith("  process ")]
    assert heads and "2 waiting on threading.Event" in heads[0] and \
        "(not set, 2 waiters)" in heads[0], causes
    limiter = [i for i, h in enumerate(causes)
               if "1 waiting on anyio.CapacityLimiter" in h and
               "(value 0, 1 waiter) held by task " in h]
    assert len(limiter) == 1, causes
    # each holder's line is followed by where its handler runs
    line = marker_line(app, "handler-sync")
    details = causes[limiter[0] + 1:limiter[0] + 6]
    jobs = [d for d in details if re.match(
        r'^ +its job runs in thread \d+ "AnyIO worker thread" at '
        r'\S*graph_uvicorn_app.py:%d in sync$' % line, d)]
    assert len(jobs) == 2, causes
    assert not [h for h in heads if "stuck task" in h], causes

# ---- links across loops, threads and helpers (graph_links_target.py) ----

LINKS = target_script("graph_links_target.py")


def links_json(keeper, interp, scenario):
    target = keeper.start_target(interp, "graph_links_target.py", scenario)
    res = run_coroscope("dump", "--format", "json", target.pid)
    assert res.returncode == 0, res
    return json.loads(res.stdout)["graph"], target


def blamed(graph, kind, marker, script=LINKS):
    line = marker_line(script, marker)
    return [n for n in graph["nodes"] if n["kind"] == kind and n["blame"]
            and n["blame"]["line"] == line and
            n["blame"]["file"].endswith(os.path.basename(script))]


def waits_for(graph, node):
    return [graph["nodes"][e["to"]]
            for e in edges(graph, "waits_for", frm=node["id"])]


def test_run_coroutine_threadsafe(keeper, interp):
    graph, target = links_json(keeper, interp, "threadsafe")
    remote = blamed(graph, "task", "remote-work")
    assert len(remote) == 2, graph["nodes"]
    caller = named(graph, "thread", "caller")
    assert caller["blame"]["line"] == marker_line(LINKS, "caller-blocked")
    # thread -> concurrent future (pending) -> the task in the other
    # loop, run by another thread, that will complete it
    edge, cf = waits_for_object(graph, caller)
    assert (cf["type"], cf["state"]) == ("concurrent.futures.Future",
                                         "pending"), cf
    first = waits_for(graph, cf)
    assert len(first) == 1 and first[0] in remote, first
    # a task of a third loop awaiting wrap_future() of the other one
    local = blamed(graph, "task", "local-waiter")
    assert len(local) == 1, graph["nodes"]
    edge, cf2 = waits_for_object(graph, local[0])
    assert cf2["type"] == "concurrent.futures.Future" and cf2 != cf
    second = waits_for(graph, cf2)
    assert len(second) == 1 and second[0] in remote and second != first
    text = run_coroscope("dump", target.pid).stdout
    assert ("waits for: concurrent.futures.Future 0x%x (pending) for task "
            % int(cf["address"], 16)) in text, text
    # the task line in the tree: one short phrase
    name = "local-waiter" if ver(interp) >= (3, 8) else "local_waiter"
    assert (" %s 0x%s pending, waits for concurrent.futures.Future "
            "(pending) of task '" % (name, local[0]["task"][2:])) in text, text


def test_gather_is_a_node(keeper, interp):
    graph, target = links_json(keeper, interp, "gather")
    gatherer = blamed(graph, "task", "gatherer")
    assert len(gatherer) == 1, graph["nodes"]
    edge, g = waits_for_object(graph, gatherer[0])
    assert (g["type"], g["state"], g["children"], g["done"]) == \
        ("asyncio.gather", "3 children, 1 done", 3, 1), g
    kids = blamed(graph, "task", "ac-child")
    assert len(kids) == 2, graph["nodes"]
    assert sorted(n["id"] for n in waits_for(graph, g)) == \
        sorted(k["id"] for k in kids)
    # through the gather, not also straight to the children
    assert waits_for(graph, gatherer[0]) == [g], graph["edges"]
    text = run_coroscope("dump", target.pid).stdout
    name = "gather" if ver(interp) >= (3, 8) else "gatherer"
    assert (" %s 0x%s pending, waits for gather of 3 (1 done)\n"
            % (name, gatherer[0]["task"][2:])) in text, text


def test_concurrent_future_waiter(keeper, interp):
    graph, target = links_json(keeper, interp, "cfuture")
    waiter = named(graph, "thread", "cf-waiter")
    assert waiter["blame"]["line"] == marker_line(LINKS, "cf-blocked")
    edge, cf = waits_for_object(graph, waiter)
    assert (cf["type"], edge["state"]) == ("concurrent.futures.Future",
                                           "pending"), edge
    assert waits_for(graph, cf) == []


def test_as_completed_children_are_awaited(keeper, interp):
    target = keeper.start_target(interp, "graph_links_target.py",
                                 "as_completed")
    res = run_coroscope("dump", "--format", "json", target.pid)
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    line = marker_line(LINKS, "ac-iterate")
    iterating = [t for t in doc["tasks"] if any(
        f["line"] == line and f["file"].endswith("graph_links_target.py")
        for f in t["stack"])]
    assert len(iterating) == 1, doc["tasks"]
    line = marker_line(LINKS, "ac-child")
    kids = [t for t in doc["tasks"] if any(
        f["line"] == line and f["file"].endswith("graph_links_target.py")
        for f in t["stack"])]
    assert len(kids) == 2, doc["tasks"]
    # each pending child points to the task iterating as_completed (not
    # a root), and the graph says that task waits for the first of them
    for k in kids:
        assert k["awaited_by"] == [iterating[0]["id"]], k
    graph = doc["graph"]
    it = [n for n in graph["nodes"] if n.get("task") == iterating[0]["id"]]
    targets = dict((graph["nodes"][e["to"]].get("task"), e.get("any"))
                   for e in edges(graph, "waits_for", frm=it[0]["id"]))
    assert dict((k["id"], targets.get(k["id"])) for k in kids) == \
        dict((k["id"], True) for k in kids), graph["edges"]
    text = run_coroscope("dump", target.pid).stdout
    roots = [l for l in text.splitlines() if l.startswith(("`- (T)",
                                                           "|- (T)"))]
    assert len(roots) == 1, text


def tornado_path(interp, tmp_path):
    """A directory to put first on sys.path for tornado, or None when
    the interpreter has its own.  Debian's python3-tornado (pure Python
    but for an optional abi3 speedups module, which crashes the
    free-threaded build) is shared with other interpreters as a tree of
    links to its .py files."""
    if subprocess.run([interp.path, "-c", "import tornado"],
                      stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode == 0:
        return None
    src = "/usr/lib/python3/dist-packages/tornado"
    if not os.path.isdir(src):
        pytest.skip("Debian's python3-tornado is not installed")
    if ver(interp) < (3, 7):
        pytest.skip("tornado 6 needs Python 3.7+")
    root = tmp_path / "tornado-path"
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        dst = root / "tornado" / os.path.relpath(dirpath, src)
        dst.mkdir(parents=True, exist_ok=True)
        for name in filenames:
            if name.endswith(".py"):
                os.symlink(os.path.join(dirpath, name), str(dst / name))
    return str(root)


def test_tornado_generators_driven_by_task(keeper, interp, tmp_path):
    extra = tornado_path(interp, tmp_path)
    target = keeper.start_target(interp, "graph_links_target.py", "tornado",
                                 *([extra] if extra else []))
    res = run_coroscope("dump", "--format", "json", target.pid)
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    graph = doc["graph"]
    drivers = blamed(graph, "task", "tornado-gen")
    assert len(drivers) == 2, graph["nodes"]
    line = marker_line(LINKS, "tornado-driver")
    drives = graph["drives"]
    gens = set()
    for driver in drivers:
        task = [t for t in doc["tasks"] if t["id"] == driver["task"]][0]
        assert task["stack"][0]["line"] == line, task
        # Its two generators, outermost first, driven by that task.
        own = [d for d in drives if d["task"] == driver["id"]]
        assert [(d["at"]["line"], d["by"]) for d in own] == [
            (marker_line(LINKS, "tornado-outer"), "tornado"),
            (marker_line(LINKS, "tornado-gen"), "tornado")], drives
        gens.update(d["generator"] for d in own)
    assert len(drives) == 4 and len(gens) == 4, drives
    text = run_coroscope("dump", target.pid).stdout
    assert "[tornado] tornado_main.<locals>.legacy  %s:%d" % (
        LINKS, marker_line(LINKS, "tornado-gen")) in text, text
    # No longer listed as generators that no task owns.
    for g in gens:
        assert g not in text, text


# ---------------------------------------------------------------------------
# trio's primitives: what each task waits on, who holds it

TRIO_SCRIPT = target_script("trio_graph.py")
# Where trio is installed: Debian's package, pyenv's 3.11.
WITH_TRIO = interpreters_importing(("3.11-debian", "3.11"), "trio")
needs_trio_interp = pytest.mark.skipif(
    not WITH_TRIO, reason="no interpreter here has trio (3.11-debian, "
    "3.11), or COROSCOPE_TEST_PYTHONS left them out")

TRIO_WAITS = [
    # (task, type, what the ready file says of it, marker)
    ("lock-waiter-1", "trio.Lock", "lock", "trio-lock-waiter"),
    ("lock-waiter-2", "trio.Lock", "lock", "trio-lock-waiter"),
    ("fifo-waiter", "trio.StrictFIFOLock", "fifo", "trio-fifo-waiter"),
    ("holder", "trio.Event", "event", "trio-holder-parked"),
    ("limit-waiter", "trio.CapacityLimiter", "limiter", "trio-limit-waiter"),
    ("sem-waiter", "trio.Semaphore", "sem", "trio-sem-waiter"),
    ("cond-waiter", "trio.Condition", "cond", "trio-cond-waiter"),
    ("cond-notified", "trio.Condition", "notified", "trio-cond-waiter"),
    ("receiver", "trio.MemoryReceiveChannel", "receiver", "trio-receiver"),
    ("looper", "trio.MemoryReceiveChannel", "looper", "trio-looper"),
    ("sender", "trio.MemorySendChannel", "sender", "trio-sender"),
]


def trio_state(key, said):
    """The state coroscope must give, from what trio said of itself."""
    def waiters(n):
        return "%d waiter%s" % (n, "" if n == 1 else "s")
    if key in ("lock", "fifo", "bare", "cond", "notified"):
        return "%s, %s%s" % ("locked" if said["locked"] else "unlocked",
                             waiters(said["waiting"]),
                             ", %d waiting for its lock" % said["lock_waiting"]
                             if said.get("lock_waiting") else "")
    if key == "event":
        return "%s, %s" % ("set" if said["set"] else "not set",
                           waiters(said["waiting"]))
    if key in ("limiter", "sem"):
        return "value %d, %s" % (said.get("left", said.get("value")),
                                 waiters(said["waiting"]))
    return "qsize %d, %s" % (said["used"], waiters(said["waiting"]))


def graph_of_target(keeper, py, script_name, *args):
    """Start the target; its ready file and its graph (JSON)."""
    target = keeper.start_target(py, script_name, *args)
    res = run_coroscope("dump", "--format", "json", target.pid)
    assert res.returncode == 0, res
    return target, json.loads(res.stdout)["graph"]


def check_waits(graph, waits, said, script):
    """Each (task, type, key, marker) of waits: the task waits on one
    object of that type, in the state said[key] gives, blamed on the
    marker's line."""
    for name, typename, key, marker in waits:
        node = named(graph, "task", name)
        edge, obj = waits_for_object(graph, node)
        assert (obj["type"], edge["state"]) == \
            (typename, trio_state(key, said[key])), (name, edge)
        assert node["blame"]["line"] == marker_line(script, marker), node


def check_holds(graph, holds):
    """Each (task, type, line, taken) of holds: the task holds that one
    object, entered at that line (None: not from a frame, the lock's
    owner), taken by the `async with` at line `taken` (None: unknown)."""
    for holder, typename, at, taken in holds:
        held = edges(graph, "holds", frm=named(graph, "task", holder)["id"])
        assert [(graph["nodes"][e["to"]]["type"],
                 e["at"] and e["at"]["line"], e["taken_line"])
                for e in held] == [(typename, at, taken)], (holder, held)


@needs_trio_interp
@pytest.mark.parametrize("py", WITH_TRIO, ids=[i.id for i in WITH_TRIO])
def test_trio_primitives(keeper, py):
    """Each trio task waits on the primitive it is parked on, in the
    state trio's own statistics() gave; the holders of the Lock (async
    with), the CapacityLimiter (async with) and the StrictFIFOLock (a
    bare acquire(): only the lock's owner says so) hold them; the text
    dump says the same."""
    target, graph = graph_of_target(keeper, py, "trio_graph.py")
    said = target.ready
    check_waits(graph, TRIO_WAITS, said, TRIO_SCRIPT)
    check_holds(graph, [
        ("holder", "trio.Lock",
         marker_line(TRIO_SCRIPT, "trio-holder-parked"),
         marker_line(TRIO_SCRIPT, "trio-holder-enters")),
        ("limit-holder", "trio.CapacityLimiter",
         marker_line(TRIO_SCRIPT, "trio-limit-parked"),
         marker_line(TRIO_SCRIPT, "trio-limit-enters")),
        ("bare-holder", "trio.StrictFIFOLock", None, None)])
    assert said["lock"]["owner"] == "holder"
    assert said["fifo"]["owner"] == "bare-holder"
    # Named by the call each waits in, not by trio's trap under it.
    for name, function in (("holder", "Event.wait"),
                           ("lock-waiter-1", "acquire"),
                           ("sem-waiter", "Semaphore.acquire"),
                           ("receiver", "MemoryReceiveChannel.receive")):
        inner = named(graph, "task", name)["innermost"]
        assert inner["file"].endswith("/trio/_sync.py") or \
            inner["file"].endswith("/trio/_channel.py"), (name, inner)
        assert inner["function"].endswith(function), (name, inner)
    # A Condition's waiter has given its lock up: no cycle.
    assert graph["cycles"] == [], graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    lock = [n for n in graph["nodes"] if n.get("type") == "trio.Lock"][0]
    assert ("waits for: trio.Lock 0x%x (%s) held by task 'holder' at "
            "trio_graph.py:%d in holder"
            % (int(lock["address"], 16), trio_state("lock", said["lock"]),
               marker_line(TRIO_SCRIPT, "trio-holder-parked"))) in text, text
    assert "lock-waiter-1 .. lock-waiter-2 pending [trio], waits for " \
        "trio.Lock (%s) held by task 'holder'\n" \
        % trio_state("lock", said["lock"]) in text, text


@needs_trio_interp
def test_trio_lock_handed_over_is_no_cycle(keeper):
    """A trio.Lock released to a task that has not run since names that
    task its owner while the task still sits in acquire(): it holds the
    lock and waits for it no more -- not a task waiting on a lock it
    holds, which made a lock cycle of one task (a deadlock that is not
    there)."""
    target, graph = graph_of_target(keeper, WITH_TRIO[0],
                                    "trio_handover.py")
    said = target.ready
    assert (said["owner"], said["locked"], said["waiting"]) == \
        ("taker", True, 0), said
    taker = named(graph, "task", "taker")
    lock = [n for n in graph["nodes"] if n.get("type") == "trio.Lock"][0]
    assert [e["from"] for e in edges(graph, "holds", to=lock["id"])] == \
        [taker["id"]], graph["edges"]
    assert edges(graph, "waits_for", frm=taker["id"], to=lock["id"]) == \
        [], graph["edges"]
    assert graph["cycles"] == [], graph["cycles"]

@needs_trio_interp
@pytest.mark.parametrize("py", WITH_TRIO, ids=[i.id for i in WITH_TRIO])
def test_trio_nursery_waits_and_lock_owners(keeper, py):
    """A parent waits for its nursery's children only at the nursery's
    end: "producer", parked on an Event in its nursery's body while
    holding the lock its child waits for, is no cycle (before: a
    deadlock that is not there), while "parent", at the end of its
    nursery holding its child's lock, is one.  And a lock trio names an
    owner of is held by that owner only: not also by "consumer", whose
    `async with` around Condition.wait() gave it up (before: two
    holders)."""
    script = target_script("trio_nursery_locks.py")
    target, graph = graph_of_target(keeper, py, "trio_nursery_locks.py")
    said = target.ready
    assert said["owners"] == {"a": "producer", "b": "parent", "c": "other",
                              "d": "leaker"}
    ids = dict((name, named(graph, "task", name)["id"]) for name in
               ("producer", "worker", "parent", "child", "consumer",
                "other", "third"))
    lock = dict((key, [n for n in graph["nodes"] if n.get("address") and
                       int(n["address"], 16) == addr][0]["id"])
                for key, addr in said["locks"].items())
    assert edges(graph, "waits_for", frm=ids["producer"],
                 to=ids["worker"]) == [], graph["edges"]
    assert edges(graph, "waits_for", frm=ids["parent"],
                 to=ids["child"]), graph["edges"]
    cycles = [sorted(c) for c in graph["cycles"]]
    assert cycles == [sorted([ids["parent"], ids["child"], lock["b"]])], \
        graph["cycles"]
    for key, owner in (("a", "producer"), ("b", "parent"), ("c", "other")):
        assert [e["from"] for e in edges(graph, "holds", to=lock[key])] == \
            [ids[owner]], (key, graph["edges"])
    assert edges(graph, "waits_for", frm=ids["third"], to=lock["c"]), \
        graph["edges"]
    assert named(graph, "task", "producer")["blame"]["line"] == \
        marker_line(script, "producer")
    # A lock whose owner has ended: no node holds it; it names the task.
    leaked = [n for n in graph["nodes"] if n["id"] == lock["d"]][0]
    assert edges(graph, "holds", to=lock["d"]) == [], graph["edges"]
    assert (int(leaked["owner_task"], 16), leaked["owner_name"]) == \
        (said["leaker"], "leaker"), leaked
    text = run_coroscope("dump", target.pid).stdout
    assert ("waits for: trio.Lock 0x%x (locked, 1 waiter) held by task "
            "'leaker' 0x%x (ended)\n" % (said["locks"]["d"], said["leaker"])) \
        in text, text


@needs_trio_interp
def test_run_names_the_trio_lock_holder(tmp_path):
    """run's likely causes: the waiters on the trio.Lock as one cause
    naming its holder, and none of them a "stuck trio task" too."""
    py = WITH_TRIO[0]
    causes = coroscope_run([py.path, TRIO_SCRIPT, str(tmp_path / "ready")],
                           tmp_path)
    line = marker_line(TRIO_SCRIPT, "trio-holder-parked")
    lock = [c for c in causes if "waiting on trio.Lock" in c]
    assert len(lock) == 1, causes
    assert "2 waiting on trio.Lock" in lock[0] and \
        ("held by task 'holder' at trio_graph.py:%d in holder" % line) \
        in lock[0], causes
    assert any("waiting on trio.StrictFIFOLock" in c and
               "held by task 'bare-holder'" in c for c in causes), causes
    assert not [c for c in causes if "stuck trio task" in c and
                ("waiter" in c or "receiver" in c)], causes


@needs_trio_interp
@pytest.mark.parametrize("py", WITH_TRIO, ids=[i.id for i in WITH_TRIO])
def test_trio_from_thread_deadlock(keeper, py, tmp_path):
    """A thread in trio.from_thread.run() waits for the system task
    running its call; with the task holding the lock that call waits
    for, and waiting in to_thread.run_sync() for that thread, it is a
    cycle, and `run` names it first (before, the thread waited for
    nothing, and a native "blocked acquiring a lock" came second to a
    plain wait on the lock)."""
    script = target_script("trio_from_thread.py")
    target, graph = graph_of_target(keeper, py, "trio_from_thread.py")
    thread = [n for n in graph["nodes"] if n["kind"] == "thread" and
              n["tid"] == target.ready["worker_tid"]]
    assert len(thread) == 1, graph["nodes"]
    thread = thread[0]
    assert thread["blame"]["line"] == marker_line(script,
                                                  "from-thread-call"), thread
    out = edges(graph, "waits_for", frm=thread["id"])
    assert len(out) == 1, graph["edges"]
    call = graph["nodes"][out[0]["to"]]
    assert call["kind"] == "task" and \
        call["blame"]["line"] == marker_line(script, "from-thread-waits"), \
        call
    edge, lock = waits_for_object(graph, call)
    assert lock["type"] == "trio.Lock", lock
    holds = edges(graph, "holds", to=lock["id"])
    assert len(holds) == 1 and holds[0]["at"]["line"] == \
        marker_line(script, "from-thread-holder"), holds
    assert [c for c in graph["cycles"] if thread["id"] in c and
            call["id"] in c and holds[0]["from"] in c], graph["cycles"]
    causes = coroscope_run([py.path, script, str(tmp_path / "ready")],
                           tmp_path)
    assert causes and causes[0].startswith("  process ") and \
        ": lock cycle: thread " in causes[0], causes


# ---------------------------------------------------------------------------
# anyio's own primitives, on its asyncio and its trio backend

ANYIO_SCRIPT = target_script("anyio_graph.py")
WITH_ANYIO = interpreters_importing(("3.11-debian", "3.11"), "anyio, trio")

ANYIO_WAITS = [
    # (task, type, what the ready file says of it, marker)
    ("lock-waiter", "anyio.Lock", "lock", "anyio-lock-waiter"),
    ("bare-waiter", "anyio.Lock", "bare", "anyio-bare-waiter"),
    # anyio's Event, not its backend's inside it
    ("holder", "anyio.Event", "event", "anyio-holder-parked"),
    ("sem-waiter", "anyio.Semaphore", "sem", "anyio-sem-waiter"),
    ("cond-waiter", "anyio.Condition", "cond", "anyio-cond-waiter"),
    ("cond-notified", "anyio.Condition", "notified", "anyio-cond-waiter"),
    ("offload-2", "anyio.CapacityLimiter", "limiter", "anyio-offload"),
    ("stream-receiver", "anyio.MemoryObjectReceiveStream", "receiver",
     "anyio-stream-receiver"),
    ("stream-sender", "anyio.MemoryObjectSendStream", "sender",
     "anyio-stream-sender"),
    # max_buffer_size math.inf: no maxsize (it was a float's bits)
    ("inf-receiver", "anyio.MemoryObjectReceiveStream", "unbounded",
     "anyio-stream-receiver"),
]


@pytest.mark.skipif(not WITH_ANYIO, reason="no interpreter here has anyio "
                    "and trio (3.11-debian, 3.11), or COROSCOPE_TEST_PYTHONS "
                    "left them out")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_anyio_primitives(keeper, backend):
    """Each task waits on anyio's primitive, not on the backend's Event
    anyio waits on inside it, in the state anyio's statistics() gave; a
    Lock's holders (async with, and a bare acquire(): its owner says so)
    and the task whose to_thread call holds the limiter's token (on
    asyncio an `async with` in anyio's frame; on trio borrowed on behalf
    of a placeholder, known from the worker thread running the task's
    function), waiting for that thread; the text says the holder at the
    program's line."""
    target, graph = graph_of_target(keeper, WITH_ANYIO[0], "anyio_graph.py",
                                    backend)
    said = target.ready
    check_waits(graph, ANYIO_WAITS, said, ANYIO_SCRIPT)
    for name, size in (("stream-receiver", 0), ("inf-receiver", None)):
        edge, obj = waits_for_object(graph, named(graph, "task", name))
        assert obj["maxsize"] == size, obj
    edge, obj = waits_for_object(graph, named(graph, "task", "holder"))
    assert int(obj["address"], 16) == said["event"]["id"], obj
    check_holds(graph, [
        ("holder", "anyio.Lock",
         marker_line(ANYIO_SCRIPT, "anyio-holder-parked"),
         marker_line(ANYIO_SCRIPT, "anyio-holder-takes")),
        ("bare-holder", "anyio.Lock", None, None)])
    assert (said["lock"]["owner"], said["bare"]["owner"]) == \
        ("holder", "bare-holder")
    limiter = [n for n in graph["nodes"]
               if n.get("type") == "anyio.CapacityLimiter"][0]
    held = edges(graph, "holds", to=limiter["id"])
    assert [graph["nodes"][e["from"]].get("name") for e in held] == \
        ["offload-1"], held
    # the text names the holder at the program's line, not anyio's
    # frame that entered the limiter (a helper's user round: "at
    # _asyncio.py:937 in run_sync_in_worker_thread (taken at line 912)")
    text = run_coroscope("dump", target.pid).stdout
    holds = [l for l in text.splitlines()
             if " holds anyio.CapacityLimiter " in l]
    assert len(holds) == 1 and re.match(
        r"^  task 'offload-1' at anyio_graph\.py:%d in " % marker_line(
            ANYIO_SCRIPT, "anyio-offload"), holds[0]), holds
    assert ", taken at line" not in holds[0], holds
    # ...and waits for the worker thread running its function, which
    # waits on the threading.Event
    offload = named(graph, "task", "offload-1")
    worker = [graph["nodes"][e["to"]]
              for e in edges(graph, "waits_for", frm=offload["id"])]
    assert [w["kind"] for w in worker] == ["thread"], worker
    edge, obj = waits_for_object(graph, worker[0])
    assert (obj["type"], edge["state"]) == \
        ("threading.Event", "not set, 1 waiter"), edge
    assert graph["cycles"] == [], graph["cycles"]


# ---------------------------------------------------------------------------
# tornado's locks

TORNADO_SCRIPT = target_script("tornado_locks.py")


def test_tornado_locks(keeper):
    """Tasks wait on tornado's Lock and Semaphore (from their __aenter__
    frames) and on its Event (no frame of tornado's: through the future
    Event.wait() returned, whose done callback, a lambda of tornado's,
    keeps the Event), in the state tornado keeps; the Lock's holder
    holds it at its line; a task whose future's callback is a lambda of
    its own that keeps the Event waits on nothing.  A task awaiting a
    @gen.coroutine generator that yields acquire() or wait() waits on
    the Lock or Event, blamed on the generator's line (it was linked to
    nothing, blamed on tornado's RequestHandler._execute)."""
    debian_with("tornado")
    target, graph = graph_of_target(keeper, DEBIAN, "tornado_locks.py")
    said = target.ready
    check_waits(graph, [
        ("lock-waiter-1", "tornado.locks.Lock", "lock",
         "tornado-lock-waiter"),
        ("lock-waiter-2", "tornado.locks.Lock", "lock",
         "tornado-lock-waiter"),
        ("holder", "tornado.locks.Event", "event", "tornado-holder-parked"),
        ("sem-waiter", "tornado.locks.Semaphore", "sem",
         "tornado-sem-waiter"),
        ("gen-lock-waiter", "tornado.locks.Lock", "lock",
         "tornado-gen-lock-waiter"),
        ("gen-event-waiter", "tornado.locks.Event", "event",
         "tornado-gen-event-waiter")], said, TORNADO_SCRIPT)
    check_holds(graph, [
        ("holder", "tornado.locks.Lock",
         marker_line(TORNADO_SCRIPT, "tornado-holder-parked"),
         marker_line(TORNADO_SCRIPT, "tornado-holder-takes"))])
    # a lambda of the program's that keeps the Event says nothing
    other = named(graph, "task", "not-on-event")
    assert edges(graph, "waits_for", frm=other["id"]) == [], graph["edges"]
    assert graph["cycles"] == [], graph["cycles"]


def test_tornado_waits_only_futures_show(keeper):
    """tornado's Queue.get() and put(), Condition.wait() and a bare
    Semaphore.acquire() return a future, and no frame of tornado's shows
    the wait: the object keeping the future in its deque of waiters is
    what the task waits on, wherever the program keeps it (a global, an
    attribute, a local), in the state tornado's reprs give, blamed on
    the line of the await."""
    debian_with("tornado")
    target, graph = graph_of_target(keeper, DEBIAN, "tornado_locks.py")
    said = target.ready

    def queue(key):
        s = said[key]
        size = "qsize %d" % s["used"]
        if s["maxsize"]:
            size += " of maxsize %d" % s["maxsize"]
        return "%s, %d waiter%s" % (size, s["waiting"],
                                    "" if s["waiting"] == 1 else "s")

    expect = [
        ("queue-getter", "tornado.queues.Queue", queue("queue"),
         "tornado-queue-getter"),
        ("queue-putter", "tornado.queues.Queue", queue("full"),
         "tornado-queue-putter"),
        ("prio-getter", "tornado.queues.Queue", queue("prio"),
         "tornado-prio-getter"),
        ("cond-waiter", "tornado.locks.Condition",
         "%d waiter" % said["cond"]["waiting"], "tornado-cond-waiter"),
        ("bare-sem", "tornado.locks.Semaphore",
         trio_state("sem", said["sem2"]), "tornado-bare-sem")]
    objects = set()
    for name, typename, state, marker in expect:
        node = named(graph, "task", name)
        edge, obj = waits_for_object(graph, node)
        assert (obj["type"], edge["state"]) == (typename, state), \
            (name, edge, obj)
        assert node["blame"]["line"] == \
            marker_line(TORNADO_SCRIPT, marker), node
        # a PriorityQueue: named as tornado names it, of the Queue family
        assert obj.get("class") == \
            (said["prio_class"] if name == "prio-getter" else None), obj
        objects.add(obj["id"])
    assert len(objects) == len(expect), "one object each: %r" % objects
    # the Lock's waiters stay on the Lock, not on its inner semaphore
    for name in ("lock-waiter-1", "lock-waiter-2"):
        edge, obj = waits_for_object(graph, named(graph, "task", name))
        assert obj["type"] == "tornado.locks.Lock", (name, obj)
    # the text says the same; a tornado Condition has no lock to hold
    res = run_coroscope("dump", target.pid)
    assert res.returncode == 0, res
    conds = [l for l in res.stdout.splitlines()
             if "waits for: tornado.locks.Condition" in l]
    assert conds and all("holder" not in l for l in conds), res.stdout
    assert any("waits for: tornado.queues.Queue" in l and
               "(qsize 1 of maxsize 1, 1 waiter)" in l
               for l in res.stdout.splitlines()), res.stdout
