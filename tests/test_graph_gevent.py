"""The wait-for graph over gevent's greenlets and primitives.

targets/gevent_waits.py parks named greenlets on gevent's RLock,
Semaphore, Event, AsyncResult, Queue (empty and full), JoinableQueue
(in get(), and in join() with tasks unfinished), a full PriorityQueue
an UnboundQueue and two Channels, one holding the RLock and the Semaphore, and two in a lock cycle; it
records the greenlets' and objects' addresses (id()) as the process knows
them.  What waits for what comes from the objects themselves (their lists
of waiting greenlets, an RLock's owner) and the holders' `with` blocks:
no frame shows a wait inside gevent's Cython code.  gevent is a Debian
package for /usr/bin/python3.11 only, so these tests run there.
"""

import re

import pytest

from conftest import marker_line, run_coroscope, target_script
from test_sched import (DEBIAN, core_dump, hub_parked, needs_gcore,
                        needs_gevent)

SCRIPT = target_script("gevent_waits.py")

pytestmark = needs_gevent


@pytest.fixture(scope="module")
def waits(module_keeper):
    target = module_keeper.start_target(DEBIAN, "gevent_waits.py")
    hub_parked(target.pid)
    return target


class Graph:
    """A dump's graph, by the target's own names for its greenlets and
    objects."""

    def __init__(self, doc, ready):
        self.graph = doc["graph"]
        self.nodes = dict((n["id"], n) for n in self.graph["nodes"])
        greenlets = dict((v, k) for k, v in ready["greenlets"].items())
        objects = dict((v, k) for k, v in ready["objects"].items())
        self.name = {}
        for n in self.graph["nodes"]:
            if n["kind"] == "greenlet":
                self.name[n["id"]] = greenlets.get(int(n["greenlet"], 16))
            elif n["kind"] == "object":
                self.name[n["id"]] = objects.get(int(n["address"], 16))

    def node(self, name):
        found = [i for i, v in self.name.items() if v == name]
        assert len(found) == 1, (name, self.graph["nodes"])
        return self.nodes[found[0]]

    def edges(self, kind):
        return set((self.name[e["from"]], self.name[e["to"]])
                   for e in self.graph["edges"] if e["kind"] == kind)


def test_what_each_greenlet_waits_for(waits):
    doc = run_coroscope("dump", "--json", waits.pid).json()
    g = Graph(doc, waits.ready)
    # (None: the main greenlet, in joinall() of every one it spawned)
    assert g.edges("waits_for") == {
        ("holder", "ev"), ("lock-waiter", "rlock"), ("sem-waiter", "sem"),
        ("getter", "empty"), ("putter", "full"), ("joinable", "joinq"),
        ("task-joiner", "tasks"), ("pq-putter", "pq"), ("unbound", "uq"),
        ("result", "ar"), ("one", "b"), ("two", "a"), ("joiner", "one"),
        ("lwaiter", "leaked"), ("j-later", "later"),
        ("ch-getter", "ch1"), ("ch-putter", "ch2")} | \
        set((None, name) for name in waits.ready["joined"]), \
        g.graph["edges"]
    # the RLock's owner, the Semaphore's `with` one frame out, each of
    # the crossed pair's first RLock
    assert g.edges("holds") == {
        ("holder", "rlock"), ("holder", "sem"), ("one", "a"),
        ("two", "b"), ("leaker", "leaked")}, g.graph["edges"]
    # a greenlet that ended holding a lock, and one not started that
    # another joins, are units too, in their states
    assert g.node("leaker")["state"] == "dead", g.node("leaker")
    assert g.node("later")["state"] == "not_started", g.node("later")
    assert g.node("holder")["state"] == "suspended", g.node("holder")
    # each greenlet by gevent's name, blamed on its own line
    for name, mark in (("lock-waiter", "lock-wait"), ("sem-waiter", "sem-wait"),
                       ("getter", "get"), ("putter", "put"),
                       ("result", "result"), ("holder", "holder-park")):
        n = g.node(name)
        assert n["name"] == name, n
        assert n["blame"]["line"] == marker_line(SCRIPT, mark), n
    # what the objects are, and their state off their C fields
    want = {"rlock": ("gevent.lock.RLock", "locked, count 1, 1 waiter"),
            "sem": ("gevent.lock.Semaphore", "value 0, 1 waiter"),
            "ev": ("gevent.event.Event", "not set, 1 waiter"),
            "ar": ("gevent.event.AsyncResult", "not set, 1 waiter"),
            "empty": ("gevent.queue.Queue", "qsize 0, 1 waiter"),
            "full": ("gevent.queue.Queue", "qsize 1 of maxsize 1, 1 waiter"),
            "joinq": ("gevent.queue.Queue", "qsize 0, 1 waiter"),
            "tasks": ("gevent.queue.Queue",
                      "qsize 1, 2 unfinished, 1 waiter"),
            # a list, not a deque, holds a PriorityQueue's items
            "pq": ("gevent.queue.Queue", "qsize 1 of maxsize 1, 1 waiter"),
            "uq": ("gevent.queue.Queue", "qsize 0, 1 waiter"),
            # a Channel keeps no items: its waiters alone
            "ch1": ("gevent.queue.Channel", "1 waiter"),
            "ch2": ("gevent.queue.Channel", "1 waiter")}
    for name, (typ, state) in want.items():
        edge = next(e for e in g.graph["edges"]
                    if g.name[e["to"]] == name and e["kind"] == "waits_for")
        assert (edge["type"], edge["state"]) == (typ, state), edge
    assert g.node("joinq")["class"] == "gevent.queue.JoinableQueue"
    assert g.node("pq")["class"] == "gevent.queue.PriorityQueue"
    assert g.node("uq")["class"] == "gevent.queue.UnboundQueue"
    # join() waits on an Event of the queue's own: the queue is what
    # it waits for, and that Event no node
    assert g.node("tasks")["unfinished"] == 2, g.node("tasks")
    assert not any(n.get("type") == "gevent.event.Event" and
                   g.name[i] != "ev" for i, n in g.nodes.items()), \
        g.graph["nodes"]
    assert g.node("sem")["value"] == 0 and g.node("ev")["set"] is False
    assert g.node("rlock")["owner"] is None  # a greenlet: the holds edge
    # joinall() waits through a MultipleWaiter, which does not say if
    # for all or the first: "first of" edges, no cycle made up, said
    # "maybe all"; join() waits for its one greenlet
    for e in g.graph["edges"]:
        if e["kind"] == "waits_for" and g.nodes[e["to"]]["kind"] == \
                "greenlet":
            assert e.get("any", False) == (g.name[e["from"]] is None), e
            assert e.get("maybe_all", False) == e.get("any", False), e
    # the main greenlet, in joinall() while the hub runs, is a unit too
    main = [n for n in g.graph["nodes"]
            if n["kind"] == "greenlet" and n["main"]]
    assert len(main) == 1 and main[0]["blame"]["line"] == \
        marker_line(SCRIPT, "joinall"), main
    # the lock cycle, and nothing else
    cycles = [sorted(g.name[i] for i in c) for c in g.graph["cycles"]]
    assert cycles == [["a", "b", "one", "two"]], g.graph["cycles"]


def test_async_result_ready(module_keeper):
    """An AsyncResult with a value or an exception is set (ready()), one
    without is not (test_what_each_greenlet_waits_for): read off its
    _value, gevent's _NONE until set, and its _exc_info."""
    target = module_keeper.start_target(DEBIAN, "gevent_results.py")
    doc = run_coroscope("dump", "--json", target.pid).json()
    objs = dict((int(n["address"], 16), n) for n in doc["graph"]["nodes"]
                if n["kind"] == "object")
    for name in ("value", "error"):
        node = objs[target.ready["objects"][name]]
        assert (node["type"], node["set"], node["state"]) == \
            ("gevent.event.AsyncResult", True, "set, 1 waiter"), node


def test_pure_python_gevent_is_not_read_as_compiled(module_keeper):
    """With gevent's Python classes (PURE_PYTHON=1) the compiled objects'
    offsets do not apply: no state or waiters read through them, only
    what Python's own structures say (the RLock's owner by its slots,
    the `with` blocks)."""
    target = module_keeper.start_target(DEBIAN, "gevent_waits.py", "pure")
    hub_parked(target.pid)
    doc = run_coroscope("dump", "--json", target.pid).json()
    g = Graph(doc, target.ready)
    assert g.edges("waits_for") == set(), doc["graph"]["edges"]
    assert ("holder", "rlock") in g.edges("holds"), doc["graph"]["edges"]
    assert ("holder", "sem") in g.edges("holds"), doc["graph"]["edges"]
    sem = g.node("sem")
    assert sem["value"] is None and sem["waiters"] is None, sem
    assert g.node("rlock")["waiters"] is None, g.node("rlock")


def test_text_names_the_holders(waits):
    res = run_coroscope("dump", waits.pid)
    assert res.returncode == 0, res
    text = res.stdout
    holder = "greenlet 'holder' at gevent_waits.py:%d in holder" % \
        marker_line(SCRIPT, "holder-call")
    # each with the line of the `with` that took it
    assert re.search(r"greenlet 'sem-waiter' at gevent_waits\.py:%d in "
                     r"sem_waiter\n    waits for: gevent\.lock\.Semaphore "
                     r"0x[0-9a-f]+ \(value 0, 1 waiter\) held by %s "
                     r"\(taken at line %d\)\n"
                     % (marker_line(SCRIPT, "sem-wait"), re.escape(holder),
                        marker_line(SCRIPT, "holder-sem")),
                     text), text
    assert re.search(r"waits for: gevent\.lock\.RLock 0x[0-9a-f]+ \(locked, "
                     r"count 1, 1 waiter\) held by %s \(taken at line %d\)\n"
                     % (re.escape(holder), marker_line(SCRIPT, "holder-rlock")),
                     text), text
    assert re.search(r"\nWait cycles:\n  greenlet '(one|two)' -> "
                     r"gevent\.lock\.RLock", text), text
    # joinall(): not said to wait for the first of them (it waits for
    # all; gevent's waiter does not tell the two apart)
    joins = re.findall(r"^  main greenlet of thread \d+ at gevent_waits\.py:"
                       r"%d in main\n    (waits for [^:]*): "
                       % marker_line(SCRIPT, "joinall"), text, re.M)
    assert joins == ["waits for the first or all of"], text


def test_run_causes_from_the_graph(waits, tmp_path):
    """`run`'s causes name the lock cycle first, and each wait with its
    holder; a greenlet the graph explains gets no "parked" cause."""
    from test_run import coroscope_run, likely_causes, sweep
    ready = str(tmp_path / "ready")
    try:
        res = coroscope_run(["--timeout", "3", "--", DEBIAN.path, SCRIPT,
                             ready])
    finally:
        sweep(str(tmp_path))
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    assert "lock cycle: greenlet 'one' -> gevent.lock.RLock" in heads[0] or \
        "lock cycle: greenlet 'two' -> gevent.lock.RLock" in heads[0], causes
    rlock = [c for c in heads if "1 waiting on gevent.lock.RLock" in c and
             "held by greenlet 'holder'" in c]
    assert len(rlock) == 1, causes
    # its waiter, and the main greenlet joining all, behind it
    assert rlock[0].endswith(
        "held by greenlet 'holder' at gevent_waits.py:%d in holder "
        "(taken at line %d); 2 blocked behind it in all"
        % (marker_line(SCRIPT, "holder-call"),
           marker_line(SCRIPT, "holder-rlock"))), causes
    details = causes[causes.index(rlock[0]) + 1:causes.index(rlock[0]) + 3]
    assert any("greenlet 'lock-waiter' at gevent_waits.py:%d in lock_waiter"
               % marker_line(SCRIPT, "lock-wait") in d for d in details), \
        causes
    for what in ("gevent.lock.Semaphore", "gevent.queue.Queue",
                 "gevent.queue.JoinableQueue", "gevent.event.AsyncResult",
                 "gevent.event.Event"):
        assert any("waiting on %s 0x" % what in c for c in heads), \
            (what, causes)
    # the one greenlet at the bottom of a wait: joining one not started
    parked = [c for c in causes if "parked at" in c]
    assert len(parked) == 1 and "greenlet 'j-later' parked at %s:%d " \
        "in joiner" % (SCRIPT, marker_line(SCRIPT, "join")) in \
        parked[0], causes
    detail = causes[causes.index(parked[0]) + 1]
    assert detail.strip() == "waits for greenlet 'later', not started", \
        causes
    dead = [c for c in heads if "1 waiting on gevent.lock.RLock" in c and
            "held by greenlet 'leaker' (dead)" in c]
    assert len(dead) == 1, causes
    # its hub parked in its loop, as it should: not blocked
    assert not [c for c in heads if "hub blocked" in c], causes


def test_run_says_the_hub_blocked(tmp_path):
    """A greenlet calls the unpatched time.sleep(): the thread, and so
    its hub, are stuck in it, and no other greenlet can run.  The first
    cause says so, naming the greenlet and its line (asyncio's "event
    loop blocked", in gevent's words), and counts the greenlets held
    up: two waiters and the main greenlet.  The Semaphore it holds is
    held by its thread "running greenlet 'blocker'" (it was the thread
    alone)."""
    from test_run import coroscope_run, likely_causes
    script = target_script("gevent_hub_blocked.py")
    res = coroscope_run(["--timeout", "3", "--", DEBIAN.path, script,
                         str(tmp_path / "ready.json")])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    assert heads and re.search(
        r'gevent hub blocked: thread \d+( "MainThread")? runs greenlet '
        r"'blocker' and has not gone back to its hub \(stuck for "
        r"[^)]*\); 3 other greenlets of the thread cannot run$",
        heads[0]), causes
    detail = causes[causes.index(heads[0]) + 1].strip()
    assert detail.startswith("at %s:%d in blocker: time.sleep(3600)"
                             % (script, marker_line(script, "hub-blocked"))
                             ), causes
    assert "sleeps in time.sleep" in detail, causes
    # the Semaphore's holder: the thread, in the greenlet it runs
    held = [c for c in heads if "waiting on gevent.lock.Semaphore" in c]
    assert len(held) == 1 and re.search(
        r"held by thread \d+ running greenlet 'blocker' at "
        r"gevent_hub_blocked.py:%d in blocker" % marker_line(
            script, "hub-blocked"), held[0]), causes


def test_run_says_a_greenlet_polls(tmp_path):
    """A greenlet retrying Event.wait(timeout=0.3) for ever wakes at
    every timeout at one line (its counter, a local, changing): run
    says it polls there, as it says of a thread (it was "parked at", as
    a greenlet that never wakes)."""
    from test_run import coroscope_run, likely_causes
    script = target_script("gevent_poller.py")
    res = coroscope_run(["--timeout", "3", "--", DEBIAN.path, script,
                         str(tmp_path / "ready.json")])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    polls = [c for c in causes if "greenlet 'poller'" in c]
    assert len(polls) == 1 and re.search(
        r"greenlet 'poller' polls at %s:%d in poller \(polling: it woke "
        r"and waited again at that line at every sample, \d+\.\ds\)$"
        % (re.escape(script), marker_line(script, "poll")), polls[0]), \
        causes


@needs_gcore
def test_the_same_graph_from_a_core(waits, tmp_path):
    live, doc = core_dump(waits.pid, tmp_path)
    g = Graph(doc, waits.ready)
    assert ("lock-waiter", "rlock") in g.edges("waits_for"), doc["graph"]
    assert ("holder", "sem") in g.edges("holds"), doc["graph"]


def test_monkey_patched_threads(module_keeper):
    """Under monkey-patching the threads are greenlets and threading's
    primitives gevent's (or wait in gevent's locks): each waits for the
    primitive the program used, once, held by the greenlet that holds
    it; threading.Lock is gevent's LockType, read as gevent's."""
    target = module_keeper.start_target(DEBIAN, "gevent_patched_waits.py")
    hub_parked(target.pid)
    doc = run_coroscope("dump", "--json", target.pid).json()
    g = Graph(doc, target.ready)
    script = target_script("gevent_patched_waits.py")
    # a Thread's ident is its greenlet's id too: parent joins child's
    # Thread, whose greenlet waits for the Lock parent holds
    assert g.edges("waits_for") == {
        ("holder", "ev"), ("waiter", "lock"), ("rwaiter", "rlock"),
        ("getter", "q"), ("parent", "childthread"),
        ("childthread", "child"), ("child", "plock")}, \
        doc["graph"]["edges"]
    # the RLock's owner is a greenlet's id (patched get_ident())
    assert g.edges("holds") == {("holder", "lock"), ("holder", "rlock"),
                                ("parent", "plock")}, doc["graph"]["edges"]
    cycles = [sorted(g.name[i] for i in c) for c in doc["graph"]["cycles"]]
    assert cycles == [["child", "childthread", "parent", "plock"]], \
        doc["graph"]["cycles"]
    want = {"lock": ("gevent.thread.LockType", "locked, 1 waiter"),
            "rlock": ("threading.RLock", "locked, count 1"),
            "ev": ("gevent.event.Event", "not set, 1 waiter"),
            "q": ("queue.Queue", "qsize 0, 1 waiter")}
    for name, (typ, state) in want.items():
        edge = next(e for e in doc["graph"]["edges"]
                    if g.name[e["to"]] == name and e["kind"] == "waits_for")
        assert (edge["type"], edge["state"]) == (typ, state), edge
    for name, mark in (("waiter", "patched-lock"),
                       ("rwaiter", "patched-rlock"),
                       ("getter", "patched-get"),
                       ("holder", "patched-park")):
        assert g.node(name)["blame"]["line"] == marker_line(script, mark)



def test_run_native_frames_stop_outside_code(tmp_path):
    """The hub runs on a stack greenlet switched to; unwinding the main
    thread past g_initialstub read words of data as return addresses:
    `run` (native frames by default) listed "(C) ??  0x1" and a stack
    canary ("0x6b90bcab2b6c500") outermost, as frames (a helper's user
    round).  The unwind stops at a return address outside executable
    memory.  A frame named by an address alone is in no file's mapping,
    and this target has no code outside files: there is none."""
    from test_run import coroscope_run
    res = coroscope_run(["--timeout", "3", "--", DEBIAN.path, SCRIPT,
                         str(tmp_path / "ready.json")])
    assert res.returncode == 124, res
    raw = re.findall(r"^  \(C\) \?\?  (0x[0-9a-f]+)$", res.stderr, re.M)
    assert not raw, (raw, res.stderr[-4000:])
    # (the unwind itself still runs: the hub's loop down to its poll)
    assert re.search(r"^  \(C\) epoll_wait", res.stderr, re.M), \
        res.stderr[-4000:]
