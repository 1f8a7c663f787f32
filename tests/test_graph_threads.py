"""Threads waiting for other threads and processes to end, and for
futures, in the wait-for graph.

targets/thread_waits.py parks the main thread in a join of a thread
that waits for a lock the main thread holds (a deadlock no lock cycle
shows without the join), a thread joining one that waits on an Event,
and, in its other scenario, the interpreter at exit waiting for the
threads that are not daemons.  The graph must lead each joining thread
through the threading.Thread to the thread it runs as, find the
deadlock's cycle, and say so in the text dump and in `coroscope run`;
threads waiting for child processes (subprocess, multiprocessing) and
in concurrent.futures.wait() and as_completed() wait for those.
Lines come from the target's "# MARK:" comments.
"""

import json
import os
import re
import subprocess

import pytest

from conftest import (COROSCOPE, TIME_SCALE, control_interpreter,
                      interpreter, left_out, marker_line, run_coroscope,
                      target_script, wait_until)

SCRIPT = target_script("thread_waits.py")
# The joined worker's class: the script's own (it runs as __main__).
WORKER_CLASS = "__main__.Worker"


def dump(keeper, interp, scenario):
    target = keeper.start_target(interp, "thread_waits.py", scenario)
    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    return json.loads(res.stdout)["graph"], target


def thread_node(graph, name):
    found = [n for n in graph["nodes"]
             if n["kind"] == "thread" and n["name"] == name]
    assert len(found) == 1, (name, graph["nodes"])
    return found[0]


def waits_for(graph, node):
    """The nodes node has a waits_for edge to."""
    return [graph["nodes"][e["to"]] for e in graph["edges"]
            if e["kind"] == "waits_for" and e["from"] == node["id"]]


def joined_thread(graph, node):
    """node waits for one threading.Thread: the thread node it leads to."""
    objs = waits_for(graph, node)
    assert len(objs) == 1, (node, graph["edges"])
    obj = objs[0]
    assert obj["kind"] == "object" and obj["type"] == "threading.Thread", obj
    runs = waits_for(graph, obj)
    assert len(runs) == 1 and runs[0]["kind"] == "thread", \
        (obj, graph["edges"])
    return obj, runs[0]


def test_join_deadlock(keeper, interp):
    graph, target = dump(keeper, interp, "join")
    main = thread_node(graph, "MainThread")
    worker = thread_node(graph, "worker")
    # The main thread joins the worker (a subclass of Thread) ...
    obj, runs = joined_thread(graph, main)
    assert runs["id"] == worker["id"]
    assert obj["class"] == WORKER_CLASS, obj
    assert main["blame"]["line"] == marker_line(SCRIPT, "main-joins"), main
    # ... which waits for the lock the main thread holds: one cycle.
    lock = waits_for(graph, worker)
    assert [n["type"] for n in lock] == ["threading.Lock"], lock
    cyc = [c for c in graph["cycles"] if main["id"] in c]
    assert len(cyc) == 1, graph["cycles"]
    assert set(cyc[0]) == {main["id"], obj["id"], worker["id"],
                           lock[0]["id"]}, cyc
    # A join with no deadlock: the joiner leads to the sleeper, which
    # waits on an Event.
    joiner = thread_node(graph, "joiner")
    _, sleeper = joined_thread(graph, joiner)
    assert sleeper["name"] == "sleeper"
    assert joiner["blame"]["line"] == marker_line(SCRIPT, "joiner-joins")
    assert [n["type"] for n in waits_for(graph, sleeper)] == \
        ["threading.Event"]
    assert not [c for c in graph["cycles"] if joiner["id"] in c]

    text = run_coroscope("dump", target.pid).stdout
    worker_line = marker_line(SCRIPT, "worker-blocked")
    assert ("waits for: %s 0x%x for thread %d (worker) at "
            "thread_waits.py:%d in " % (WORKER_CLASS, int(obj["address"], 16),
                                        worker["tid"], worker_line)) in text, \
        text
    cycle_text = ("thread %d (MainThread) -> %s 0x%x -> thread %d (worker)"
                  % (main["tid"], WORKER_CLASS, int(obj["address"], 16),
                     worker["tid"]))
    assert cycle_text in text, text


def test_exit_waits_for_threads_not_daemons(keeper, interp):
    graph, target = dump(keeper, interp, "exit")
    main = thread_node(graph, "MainThread")
    assert main["innermost"]["file"].endswith("threading.py"), main
    waited = {}
    for obj in waits_for(graph, main):
        assert obj["type"] == "threading.Thread", obj
        runs = waits_for(graph, obj)
        assert len(runs) == 1, (obj, graph["edges"])
        waited[runs[0]["name"]] = runs[0]
    # Not the daemon, not itself.
    assert sorted(waited) == ["forgotten", "forgotten-2"], waited
    assert waited["forgotten"]["blame"]["line"] == \
        marker_line(SCRIPT, "forgotten-waits")
    assert waited["forgotten-2"]["blame"]["line"] == \
        marker_line(SCRIPT, "forgotten-2-waits")
    text = run_coroscope("dump", target.pid).stdout
    # A Condition's waiter waits for notify: its lock is free, and has no
    # holder to be unknown.
    assert "(unlocked, 1 waiter)\n" in text, text
    assert "holder unknown" not in text, text


def test_futures_wait_and_as_completed(keeper, interp):
    """A thread in concurrent.futures.wait() or as_completed() waits for
    the futures not done (each for its worker thread), not for the
    private Event they would set."""
    graph, target = dump(keeper, interp, "futures")
    done = target.ready["done"]
    inner = {}
    for name, marker in (("waiter", "waiter-waits"),
                         ("completer", "completer-waits")):
        node = thread_node(graph, name)
        assert node["blame"]["line"] == marker_line(SCRIPT, marker), node
        futs = waits_for(graph, node)
        assert [f["type"] for f in futs] == \
            ["concurrent.futures.Future"], (name, futs)
        assert futs[0]["address"] != done and futs[0]["state"] == "running"
        workers = waits_for(graph, futs[0])
        assert len(workers) == 1 and workers[0]["kind"] == "thread", workers
        inner[name] = [n["type"] for n in waits_for(graph, workers[0])]
    # each job's worker thread, and what it waits on
    assert inner == {"waiter": ["threading.Event"],
                     "completer": ["threading.Lock"]}, inner
    # A wait for the first of two jobs: an "any" edge to each (each for
    # its worker).  One job waits for a lock the waiting thread holds,
    # the other on an Event: no deadlock, no cycle; both on that lock:
    # a deadlock, a cycle.
    for name, marker, deadlock in (("first", "first-waits", False),
                                   ("first-both", "both-waits", True)):
        first = thread_node(graph, name)
        assert first["blame"]["line"] == marker_line(SCRIPT, marker)
        out = [e for e in graph["edges"]
               if e["kind"] == "waits_for" and e["from"] == first["id"]]
        assert sorted((graph["nodes"][e["to"]]["type"],
                       graph["nodes"][e["to"]]["state"], e.get("any"))
                      for e in out) == \
            [("concurrent.futures.Future", "running", True)] * 2, out
        assert len([c for c in graph["cycles"] if first["id"] in c]) == \
            int(deadlock), (name, graph["cycles"])
    # wait() of a dict (the argument as given, before 3.9): the future
    # not done, read from the set wait() made
    by_dict = thread_node(graph, "by-dict")
    assert by_dict["blame"]["line"] == marker_line(SCRIPT, "dict-waits")
    futs = waits_for(graph, by_dict)
    assert [(f["type"], f["state"]) for f in futs] == \
        [("concurrent.futures.Future", "running")], futs
    assert [n["type"] for n in waits_for(graph, waits_for(graph, futs[0])[0])] \
        == ["threading.Event"]


def test_waits_for_child_processes(keeper, interp):
    """A thread in Popen.wait() or communicate(), or in
    multiprocessing.Process.join(), waits for that object, with the pid
    the interpreter gave the child."""
    graph, target = dump(keeper, interp, "children")
    pids = target.ready["children"]
    for name, typename, marker, state in (
            ("runner", "subprocess.Popen", "runner-waits", ""),
            ("capturer", "subprocess.Popen", "capturer-waits", ""),
            ("reaped", "subprocess.Popen", "reaped-waits",
             ", exited (returncode 0)"),
            ("MainThread", "multiprocessing.Process", "main-joins-child",
             "")):
        node = thread_node(graph, name)
        assert node["blame"]["line"] == marker_line(SCRIPT, marker), node
        objs = waits_for(graph, node)
        assert len(objs) == 1, (name, objs)
        assert (objs[0]["type"], objs[0]["pid"], objs[0]["state"]) == \
            (typename, pids[name], "pid %d%s" % (pids[name], state)), objs[0]


def test_tasks_wait_for_asyncio_child_processes(keeper, interp):
    """A task in asyncio's Process.wait() or communicate() waits for
    that Process, with its child's pid."""
    graph, target = dump(keeper, interp, "achildren")
    pids = target.ready["children"]
    for name in ("aio-waiter", "aio-capturer"):
        line = marker_line(SCRIPT, name + "-waits")
        tasks = [n for n in graph["nodes"] if n["kind"] == "task" and
                 n["blame"] and n["blame"]["line"] == line]
        assert len(tasks) == 1, (name, graph["nodes"])
        procs = [n for n in waits_for(graph, tasks[0])
                 if n.get("type") == "asyncio.subprocess.Process"]
        assert len(procs) == 1, (name, waits_for(graph, tasks[0]))
        assert (procs[0]["pid"], procs[0]["state"]) == \
            (pids[name], "pid %d" % pids[name]), procs[0]


def test_queue_join_waits_for_unfinished_items(keeper, interp):
    """A Queue.join() waits for the items not marked task_done(): the
    state says how many where that is more than the queue holds."""
    graph, target = dump(keeper, interp, "queues")
    for name, kind, typename, state in (
            ("q-joiner", "thread", "queue.Queue",
             "qsize 1, 2 unfinished, 1 waiter"),
            ("aq-joiner", "task", "asyncio.Queue",
             "qsize 0, 1 unfinished, 1 waiter")):
        line = marker_line(SCRIPT, name + "-waits")
        units = [n for n in graph["nodes"] if n["kind"] == kind and
                 n["blame"] and n["blame"]["line"] == line]
        assert len(units) == 1, (name, graph["nodes"])
        objs = waits_for(graph, units[0])
        assert [(o["type"], o["state"], o["unfinished"]) for o in objs] == \
            [(typename, state, int(state.split(", ")[1].split()[0]))], objs


def test_a_lock_released_inside_its_with_is_not_held(keeper, interp):
    """A thread that released its lock inside the `with` (as a Condition
    of a library's own does while it waits: gevent's threadpool) holds
    nothing: no holds edge to a lock its state says is unlocked.  The
    thread inside a plain `with` still holds its lock."""
    graph, target = dump(keeper, interp, "released")
    holds = dict((graph["nodes"][e["from"]].get("name"),
                  graph["nodes"][e["to"]]) for e in graph["edges"]
                 if e["kind"] == "holds")
    assert "releaser" not in holds, holds
    assert int(holds["holder"]["address"], 16) == target.ready["held"], \
        holds
    assert holds["holder"]["state"] == "locked", holds


def test_pool_results_wait_for_the_workers(keeper, interp):
    """A thread in a multiprocessing Pool's map() or apply_async().get()
    waits for the result, which waits for the pool's worker processes
    (their pids as the pool has them); a ThreadPool's result for its
    worker threads.  Before 3.8 a result keeps no reference to its pool:
    the pool is then the one whose map() the waiting thread is in, and a
    result of apply_async(), waited on outside the pool's calls, waits
    for nothing known."""
    graph, target = dump(keeper, interp, "pool")
    new = tuple(int(x) for x in interp.version.split(".")[:2]) >= (3, 8)
    for name, typename, left in (
            ("mapper", "multiprocessing.pool.MapResult", "2 left"),
            ("applier", "multiprocessing.pool.ApplyResult", ""),
            ("thread-mapper", "multiprocessing.pool.MapResult", "2 left")):
        linked = new or name != "applier"
        node = thread_node(graph, name)
        assert node["blame"]["line"] == marker_line(SCRIPT, name + "-waits")
        results = waits_for(graph, node)
        assert [(r["type"], r["state"]) for r in results] == \
            [(typename, left)], (name, results)
        workers = waits_for(graph, results[0])
        if not linked:
            assert workers == [], workers
        elif name == "thread-mapper":
            threads = [waits_for(graph, w) for w in workers]
            assert [w["type"] for w in workers] == ["threading.Thread"] * 2
            assert sorted(t[0]["name"] for t in threads) == \
                sorted(n["name"] for n in graph["nodes"]
                       if n["kind"] == "thread" and n["blame"] and
                       n["blame"]["function"].endswith("thread_job"))
        else:
            # the family, and the class the interpreter gives them
            assert sorted((w["type"], w.get("class"), w["pid"])
                          for w in workers) == \
                sorted(("multiprocessing.Process",
                        target.ready["worker_class"], pid)
                       for pid in target.ready["workers"]), workers


def run_causes(tmp_path, scenario, py="/usr/bin/python3.11"):
    """`coroscope run` of a scenario under py (Debian's python3.11), until
    it times out: its likely causes (the lines after their heading) and
    what the target said when ready."""
    if not os.path.exists(py):
        pytest.skip("%s is not installed" % py)
    ready = tmp_path / "ready.json"
    res = subprocess.run([COROSCOPE, "run", "--timeout",
                          str(2 * TIME_SCALE), "--", py, SCRIPT, str(ready),
                          scenario],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60 * TIME_SCALE)
    assert res.returncode == 124, res.stderr
    lines = res.stderr.splitlines()
    first = lines.index("coroscope: likely cause, most likely first:") + 1
    return lines[first:], json.loads(ready.read_text())


def seen_lines(lines):
    """The lines of `run`'s "stuck or busy" samples section."""
    start = [i for i, l in enumerate(lines)
             if l.startswith("coroscope: sampled over")]
    assert len(start) == 1, lines
    out = []
    for l in lines[start[0] + 1:]:
        if not l.startswith("  "):
            break
        out.append(l)
    return out


def test_import_waits_for_the_importer(keeper, interp):
    """A thread importing a module another thread is importing waits for
    importlib's lock on it, held by the importer (its _ModuleLock's
    owner), where the import has got to; before, nothing (or, while
    bare acquire() calls of importlib counted, "holder unknown")."""
    graph, target = dump(keeper, interp, "import")
    importer = thread_node(graph, "importer")
    second = thread_node(graph, "second")
    objs = waits_for(graph, second)
    assert [o["type"] for o in objs] == ["importlib._ModuleLock"], objs
    assert objs[0]["locked"] is True, objs
    holds = [e for e in graph["edges"]
             if e["kind"] == "holds" and e["to"] == objs[0]["id"]]
    assert [e["from"] for e in holds] == [importer["id"]], graph["edges"]
    # (the import itself waits on an Event)
    assert [o["type"] for o in waits_for(graph, importer)] == \
        ["threading.Event"], graph["edges"]
    slow = target_script("slow_import.py")
    assert importer["innermost"]["file"] == slow or \
        importer["blame"]["line"] == marker_line(slow, "slow-import"), \
        importer
    text = run_coroscope("dump", target.pid).stdout
    assert ("waits for: importlib._ModuleLock 0x%x (locked, 1 waiter) held "
            "by thread %d (importer) at slow_import.py:%d in <module>"
            % (int(objs[0]["address"], 16), importer["tid"],
               marker_line(slow, "slow-import"))) in text, text


def test_jobs_queued_behind_their_waiters(keeper, interp):
    """A job that submits another to its own ThreadPoolExecutor and waits
    for it, no worker free to take it: the queued job's future waits for
    the first free of the pool's workers (read from the pool's work
    queue: a queue.Queue up to 3.8, a SimpleQueue's list up to 3.12, its
    ring from 3.13).  Where all of them wait in turn (one worker; two,
    each on a job queued behind it) the graph has the deadlock's cycle;
    a pool with a worker that will be free one day (asleep) has none.
    Before, a queued job's future waited for nothing."""
    graph, target = dump(keeper, interp, "starved")
    queued = target.ready["queued"]

    def future(name):
        found = [n for n in graph["nodes"]
                 if n["kind"] == "object" and n["address"] == queued[name]]
        assert len(found) == 1, (name, graph["nodes"])
        assert (found[0]["type"], found[0]["state"]) == \
            ("concurrent.futures.Future", "pending"), found
        return found[0]

    def ids(nodes):
        return sorted(n["id"] for n in nodes)

    line = marker_line(SCRIPT, "starved-waits")
    one, f = thread_node(graph, "one_0"), future("one")
    assert one["blame"]["line"] == line, one
    assert ids(waits_for(graph, one)) == [f["id"]], graph["edges"]
    assert ids(waits_for(graph, f)) == [one["id"]], graph["edges"]
    assert [c for c in graph["cycles"] if set(c) == {one["id"], f["id"]}], \
        graph["cycles"]
    two = [thread_node(graph, "two_0"), thread_node(graph, "two_1")]
    jobs = [future("two-a"), future("two-b")]
    for job in jobs:
        out = [e for e in graph["edges"]
               if e["kind"] == "waits_for" and e["from"] == job["id"]]
        assert sorted(e["to"] for e in out) == ids(two), out
        assert all(e.get("any") for e in out), out
    cyc = [c for c in graph["cycles"] if set(c) & set(ids(two))]
    assert len(cyc) == 1 and set(cyc[0]) <= set(ids(two) + ids(jobs)), \
        graph["cycles"]
    # two pools whose workers each wait for a job queued in the other
    cross = [thread_node(graph, n) for n in ("xa_0", "xa_1", "xb_0", "xb_1")]
    cyc = [c for c in graph["cycles"] if set(c) & set(ids(cross))]
    assert len(cyc) == 1, graph["cycles"]
    names = [graph["nodes"][i].get("name") or "" for i in cyc[0]]
    assert any(n.startswith("xa_") for n in names) and \
        any(n.startswith("xb_") for n in names), names
    free, sleeper = thread_node(graph, "free_1"), thread_node(graph, "free_0")
    job = future("free")
    assert ids(waits_for(graph, job)) == ids([free, sleeper]), graph["edges"]
    assert not [c for c in graph["cycles"] if free["id"] in c], \
        graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    assert ("waits for: concurrent.futures.Future %s (pending) queued for "
            "its pool's one worker, thread %d (one_0) at thread_waits.py:%d "
            "in submits_and_waits" % (queued["one"], one["tid"], line)) \
        in text, text
    assert ("waits for: concurrent.futures.Future %s (pending) queued for "
            "the first free of its pool's workers: thread "
            % queued["free"]) in text, text


def test_run_finds_the_starved_pool(tmp_path):
    """`run` leads with the pools' deadlocks, the two workers' as one
    cause naming both; the pool with a sleeping worker is none."""
    causes, ready = run_causes(tmp_path, "starved")
    heads = [c for c in causes if c.startswith("  process ")]
    one = [i for i, c in enumerate(causes) if re.search(
        r": wait cycle: thread (\d+) \(one_0\) -> concurrent\.futures\."
        r"Future %s \(pending\) -> thread \1 \(one_0\)$" % ready["queued"]["one"],
        c)]
    assert len(one) == 1, causes
    two = [i for i, c in enumerate(causes) if ": wait cycle: thread " in c
           and "(two_" in c]
    assert len(two) == 1, causes
    assert causes[two[0]].endswith(
        "; its job is queued for the first free of its pool's 2 workers, "
        "all stuck"), causes
    line = marker_line(SCRIPT, "starved-waits")
    details = causes[two[0] + 1:two[0] + 3]
    for name in ("two_0", "two_1"):
        assert len([d for d in details if "(%s) at thread_waits.py:%d in "
                    "submits_and_waits" % (name, line) in d]) == 1, details
    cross = [i for i, c in enumerate(causes) if ": wait cycle: thread " in c
             and "(xa_" in c]
    assert len(cross) == 1 and causes[cross[0]].endswith(
        "; its 2 jobs are each queued for the first free of their pool's "
        "workers, all stuck"), causes
    # the four workers, each once: two on the cycle, two after it
    details = causes[cross[0] + 1:cross[0] + 5]
    for name in ("xa_0", "xa_1", "xb_0", "xb_1"):
        assert len([d for d in details if "(%s) at " % name in d]) == 1, \
            details
    assert heads.index(causes[one[0]]) < 3 and \
        heads.index(causes[two[0]]) < 3 and \
        heads.index(causes[cross[0]]) < 3, heads
    assert not any("cycle" in c and "free_" in c for c in causes), causes
    # no lock on them: wait cycles, not lock cycles (the report's kind
    # is lock_cycle for both)
    assert not any("lock cycle" in c for c in causes), causes


def test_run_guesses_a_deadlock_half_in_c(tmp_path):
    """A thread waits for a threading.Lock (the graph says so, with its
    holder) whose holder waits for a pthread mutex the first holds (no
    Python object stands for it): the two are still counted as a
    possible deadlock, first.  (Before review, the graph's waiter left
    the count, and nothing said deadlock.)"""
    causes, _ = run_causes(tmp_path, "mixed")
    assert causes[0].endswith(
        ": possible deadlock: 2 threads are blocked acquiring locks"), causes
    for name, mark in (("py-then-c", "mixed-c-waits"),
                       ("c-then-py", "mixed-py-waits")):
        assert any('"%s" at %s:%d in ' % (name, SCRIPT, marker_line(SCRIPT,
                                                                    mark))
                   in c for c in causes[1:3]), causes


def test_rlock_of_a_task_on_a_blocked_loop(keeper, interp):
    """A task holds an RLock across an await; its loop's thread is
    blocked in another task's step, on a Lock held by a thread that
    waits for the RLock.  The loop's thread holds the RLock for its
    task: the cycle runs through it."""
    graph, target = dump(keeper, interp, "rlock-loop")
    main, other = thread_node(graph, "MainThread"), thread_node(graph, "other")
    assert main["blame"]["line"] == marker_line(SCRIPT, "rloop-blocked")
    assert other["blame"]["line"] == marker_line(SCRIPT, "rloop-other")
    cyc = [c for c in graph["cycles"] if main["id"] in c and
           other["id"] in c]
    assert len(cyc) == 1, graph["cycles"]
    types = sorted(graph["nodes"][i].get("type") for i in cyc[0]
                   if graph["nodes"][i]["kind"] == "object")
    assert types == ["threading.Lock", "threading.RLock"], types


def test_run_finds_the_join_deadlock(tmp_path):
    causes, _ = run_causes(tmp_path, "join")
    assert "lock cycle: " in causes[0], causes[0]
    for part in ("(MainThread) -> %s 0x" % WORKER_CLASS, "(worker) -> "
                 "threading.Lock 0x"):
        assert part in causes[0], causes[0]
    rest = "\n".join(causes[1:3])
    assert ("(MainThread) at thread_waits.py:%d in join_scenario"
            % marker_line(SCRIPT, "main-joins")) in rest, rest
    assert ("(worker) at thread_waits.py:%d in Worker.run"
            % marker_line(SCRIPT, "worker-blocked")) in rest, rest


def test_run_names_the_children_waited_for(tmp_path):
    lines, ready = run_causes(tmp_path, "children")
    pids = ready["children"]
    # (each wait with a line for where its Python child is, too)
    lines = lines[:18]
    causes = "\n".join(lines)
    for name, typename in (("runner", "subprocess.Popen"),
                           ("MainThread", "multiprocessing.Process")):
        assert ("1 waiting on %s 0x" % typename) in causes, causes
        assert ("(pid %d)" % pids[name]) in causes, causes
    # each waiting thread at its own line, with that line's source
    # (past subprocess.py and multiprocessing's popen_fork.py alike)
    for name, marker in (("runner", "runner-waits"),
                         ("capturer", "capturer-waits"),
                         ("reaped", "reaped-waits"),
                         ("MainThread", "main-joins-child")):
        line = marker_line(SCRIPT, marker)
        with open(SCRIPT) as f:
            source = f.read().splitlines()[line - 1].strip()
        said = [l for l in lines
                if "(%s) at thread_waits.py:%d in " % (name, line) in l]
        assert len(said) == 1 and said[0].endswith("): " + source), \
            (name, causes)


def test_run_follows_pool_results_to_the_workers(tmp_path):
    """`run` names the worker processes a pool's results wait for, in
    one cause, with the threads behind the results; the pool's own
    handler threads, idle in C queues by design, make no "possible
    deadlock"."""
    lines, ready = run_causes(tmp_path, "pool")
    causes = "\n".join(lines[:20])
    # one cause for the pool's two workers, which both results wait for
    pool = [c for c in lines[:20]
            if "2 waiting on %s 0x" % ready["worker_class"] in c]
    assert len(pool) == 1, causes
    for pid in ready["workers"]:
        assert "(pid %d)" % pid in pool[0], causes
    for name in ("mapper", "applier"):
        assert ("waited on by thread" in causes and
                "(%s) at thread_waits.py:%d in " %
                (name, marker_line(SCRIPT, name + "-waits"))) in causes, causes
    assert "possible deadlock" not in causes, causes
    assert "is blocked acquiring a lock" not in causes, causes
    # the two pools' handler threads (three each) wait for work by
    # design: one line for them, none each
    seen = seen_lines(lines)
    idle = [re.search(r"^  process %d: (\d+) threads idle by design, not "
                      r"listed: a multiprocessing pool's handler thread "
                      r"\((\d+)\)$" % ready["pid"], l) for l in seen]
    idle = [m for m in idle if m]
    assert len(idle) == 1 and idle[0].group(1) == idle[0].group(2) and \
        int(idle[0].group(1)) >= 6, seen
    assert not [l for l in seen if "_handle_" in l], seen


def test_run_leaves_out_the_fork_server_and_resource_tracker(tmp_path):
    """3.14 starts a Pool's workers from a fork server, beside a resource
    tracker: processes that wait for work by design, which `run`'s
    samples name in one line each instead of listing them as stuck, and
    its --report marks "idle"."""
    py = "/opt/python3.14/bin/python3.14"
    if not os.path.exists(py):
        pytest.skip("%s is not built here" % py)
    ready, report = tmp_path / "ready.json", tmp_path / "report.json"
    res = subprocess.run([COROSCOPE, "run", "--timeout",
                          str(2 * TIME_SCALE), "--report", str(report), "--",
                          py, SCRIPT, str(ready), "pool"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60 * TIME_SCALE)
    assert res.returncode == 124, res.stderr
    seen = seen_lines(res.stderr.splitlines())
    whats = ("multiprocessing's resource tracker",
             "multiprocessing's fork server")
    for what in whats:
        assert [l for l in seen if re.search(
            r"^  process \d+: 1 thread idle by design, not listed: %s "
            r"\(1\)$" % re.escape(what), l)], (what, seen)
    assert not [l for l in seen if "resource_tracker.py" in l or
                "forkserver.py" in l], seen
    idle = {}
    for p in json.loads(report.read_text())["processes"]:
        for t in p.get("sampling", {}).get("threads", []):
            if t["idle"]:
                idle[t["idle"]] = idle.get(t["idle"], 0) + 1
    assert [idle.get(w) for w in whats] == [1, 1], idle
    assert idle.get("a multiprocessing pool's handler thread", 0) >= 6, idle


@pytest.mark.not_sanitized("on 3.7, which the sanitizer pass leaves out")
def test_run_names_a_pool_wait_before_38(tmp_path):
    """Before 3.8 a pool's result keeps no link to its pool: map()'s
    result is followed to the workers of the pool whose map() the thread
    is in, as from 3.8 (before, "waits in map (pool.py)"); the result
    of apply_async(), waited on outside the pool's calls, stops the
    graph, and the thread's own cause names the wait and the line it
    was called from."""
    py = interpreter("3.7")
    if py is None or left_out("3.7"):
        pytest.skip("pyenv's 3.7 is not installed or left out")
    lines, ready = run_causes(tmp_path, "pool", py.path)
    causes = "\n".join(lines[:30])
    pool = [c for c in lines[:30]
            if "1 waiting on %s 0x" % ready["worker_class"] in c]
    assert len(pool) == 1, causes
    assert any(re.search(
        r"multiprocessing\.pool\.MapResult 0x[0-9a-f]+ \(2 left\) waited "
        r"on by thread \d+ \(mapper\) at thread_waits\.py:%d in mapper "
        % marker_line(SCRIPT, "mapper-waits"), c) for c in lines[:30]), causes
    assert ("thread_waits.py:%d in applier: " %
            marker_line(SCRIPT, "applier-waits")) in causes, causes
    assert "waits in get (pool.py)" in causes, causes
    assert "waits in map (pool.py)" not in causes.replace(
        '"thread-mapper" waits in map', ""), causes


def test_threadsafe_future_waits_for_its_loop(keeper, interp):
    """A concurrent future of run_coroutine_threadsafe() whose coroutine
    no task runs yet waits for the thread of the loop it is scheduled on
    (its callback in the loop's ready queue): the loop's own thread
    blocked in result() waits for itself, a cycle; a thread waiting for
    a coroutine scheduled on a loop whose thread is stuck in a task's
    step waits for that thread, and so does one waiting for a coroutine
    scheduled on a loop no task runs on, whose thread is stuck in a
    callback.  Before, the futures waited for nothing."""
    script = target_script("threadsafe_waits.py")
    target = keeper.start_target(interp, "threadsafe_waits.py")
    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    graph = json.loads(res.stdout)["graph"]
    main = thread_node(graph, "MainThread")
    assert main["blame"]["line"] == marker_line(script, "self-blocked")
    gens = dict((g["id"], g) for g in json.loads(res.stdout)["generators"])
    for waiter, runner, coro in ((main, main, "compute"),
                                 (thread_node(graph, "caller"),
                                  thread_node(graph, "looper"),
                                  "compute_for_caller"),
                                 # (a loop no task runs on, stuck in a
                                 # callback: found by its thread's
                                 # run_forever(); before, no edge)
                                 (thread_node(graph, "cb-caller"),
                                  thread_node(graph, "cb-looper"),
                                  "compute_for_cb_caller")):
        futs = waits_for(graph, waiter)
        assert [(f["type"], f["state"]) for f in futs] == \
            [("concurrent.futures.Future", "pending")], futs
        assert waits_for(graph, futs[0]) == [runner], graph["edges"]
        # the coroutine it was asked to run, not started
        g = gens[futs[0]["scheduled_coroutine"]]
        assert (g["qualname"], g["kind"], g["state"]) == \
            (coro, "coroutine", "created"), g
    assert [c for c in graph["cycles"] if main["id"] in c], graph["cycles"]
    looper = thread_node(graph, "looper")
    assert not [c for c in graph["cycles"] if looper["id"] in c], \
        graph["cycles"]
    text = run_coroscope("dump", target.pid).stdout
    assert re.search(r"waits for: concurrent\.futures\.Future 0x[0-9a-f]+ "
                     r"\(pending\) whose coroutine compute_for_caller\(\) "
                     r"is not started: "
                     r"scheduled on the loop of thread \d+ \(looper\) at "
                     r"threadsafe_waits\.py:%d in sleeps_in_step\n"
                     % marker_line(script, "looper-sleeps"), text), text
    assert re.search(r"\(pending\) whose coroutine compute_for_cb_caller\(\) "
                     r"is not started: scheduled on the loop of thread \d+ "
                     r"\(cb-looper\) at threadsafe_waits\.py:%d in "
                     r"sleeping_callback\n" % marker_line(script, "cb-sleeps"),
                     text), text


def test_child_blocked_writing_to_our_pipe(keeper, interp):
    """A thread waiting for a child (Popen.wait()) that is blocked
    writing to its stdout or stderr, a pipe whose read end this process
    holds and does not read: the Popen says so, with the child's fd and
    the waiting process's own fd of the pipe (what the interpreter's
    Popen says); one blocked reading its stdin, a pipe whose write end
    this process holds open, says that; a child that only sleeps says
    nothing of the kind.  The lock Popen.wait() holds, which nobody
    waits for, is in no Holders list."""
    target = keeper.start_target(interp, "child_pipes.py")
    said = target.ready
    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    graph = json.loads(res.stdout)["graph"]
    # ("mixed": its main thread idles in a read of a pipe of its own,
    # which must not hide the other thread's blocked write)
    for waiter, key, fd, word in (("out-waiter", "out", 1, "stdout"),
                                  ("err-waiter", "err", 2, "stderr"),
                                  ("mixed-waiter", "mixed", 1, "stdout")):
        objs = waits_for(graph, thread_node(graph, waiter))
        assert [(o["type"], o["pid"]) for o in objs] == \
            [("subprocess.Popen", said[key][0])], objs
        assert objs[0]["blocked_writing"] == \
            {"fd": fd, "read_end_fd": said[key][1]}, objs[0]
    for waiter, key in (("out-waiter", "out"), ("err-waiter", "err")):
        objs = waits_for(graph, thread_node(graph, waiter))
        assert objs[0]["blocked_reading"] is None, objs[0]
    # the other direction: the child reads its stdin to the end, and
    # this process holds the write end open
    objs = waits_for(graph, thread_node(graph, "in-waiter"))
    assert [(o["pid"], o["blocked_writing"], o["blocked_reading"])
            for o in objs] == \
        [(said["in"][0], None, {"fd": 0, "write_end_fd": said["in"][1]})], \
        objs
    objs = waits_for(graph, thread_node(graph, "sleep-waiter"))
    assert [(o["pid"], o["blocked_writing"], o["blocked_reading"])
            for o in objs] == [(said["sleeper"], None, None)], objs
    text = run_coroscope("dump", target.pid).stdout
    # Popen.wait() holds its own _waitpid_lock, which nobody waits for:
    # the JSON keeps the hold, the text's Holders leaves it out (before,
    # a line per waiting thread, "... in Popen._wait holds
    # threading.Lock ...: 0 waiting")
    waiter = thread_node(graph, "out-waiter")
    assert [e for e in graph["edges"] if e["kind"] == "holds" and
            e["from"] == waiter["id"]], graph["edges"]
    assert "\nHolders:\n" not in text, text
    for key, word in (("out", "stdout"), ("err", "stderr")):
        assert ("(pid %d; blocked writing to its %s, a pipe this process "
                "holds the read end of as fd %d)\n"
                % (said[key][0], word, said[key][1])) in text, text
    assert ("(pid %d; blocked reading its stdin, a pipe this process holds "
            "the write end of as fd %d)\n" % tuple(said["in"])) in text, text


def test_a_set_events_waiter_waits_on_nothing(keeper):
    """A thread still in the wait() of an Event another thread set, kept
    from returning by a thread holding the GIL in a long C call
    (targets/set_event_gil.py): the Waits section said it "waits for:
    threading.Event ... (set, 0 waiters)" (a helper's user round).  It
    was woken: it waits on no object, but for the GIL."""
    target = keeper.start_target(control_interpreter(), "set_event_gil.py")
    hog = target.ready["hog"]

    def burnt():
        # (utime + stime of the hog thread, in ticks: in its regex)
        with open("/proc/%d/task/%d/stat" % (target.pid, hog)) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12]) >= 20

    try:
        assert wait_until(burnt, 10 * TIME_SCALE), "the hog never ran"
        doc = json.loads(run_coroscope("dump", "--json", target.pid).stdout)
        main = [n for n in doc["graph"]["nodes"] if n["kind"] == "thread"
                and n["tid"] == target.pid]
        assert len(main) == 1, doc["graph"]["nodes"]
        assert main[0]["blame"]["line"] == marker_line(
            target_script("set_event_gil.py"), "wait"), main
        assert not [e for e in doc["graph"]["edges"]
                    if e["kind"] == "waits_for" and
                    e["from"] == main[0]["id"]], doc["graph"]["edges"]
    finally:
        target.proc.kill()
