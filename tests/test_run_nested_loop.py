"""`run` on a loop run again inside a task's step (Debian's nest_asyncio,
as notebooks use it: targets/nested_loop.py).  The thread waits for
events in the nested loop's select(), inside the outer task's step: its
loop is not blocked, it serves every task, and the outer task waits for
the one it runs the loop for.  Before, run called it "event loop
blocked", and the tasks asleep in asyncio.sleep() stuck behind it (under
nest_asyncio a Future's __await__ is a generator of its own, in the way
of the sleep's)."""

import json
import re

from conftest import DEBIAN, debian_with, marker_line, target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("nested_loop.py")


def run_nested(work, how, timeout):
    debian_with("nest_asyncio")
    report = work / "report.json"
    res = coroscope_run(["--timeout", timeout, "--report", report, "--",
                         DEBIAN, SCRIPT, str(work / "ready"), how])
    assert res.returncode == 124, res
    info = json.loads((work / "ready").read_text())
    return info["pid"], res, json.loads(report.read_text())


def test_nested_loop_waiting_is_no_blocked_loop(work):
    pid, res, doc = run_nested(work, "idle", "3")
    # what the samples saw: the thread in the nested loop's select(),
    # called at the marked line, inside main()'s step
    assert re.search(
        r'^  process %d: thread %d "MainThread" stuck for (at least )?'
        r'[0-9.]+s at \S*nested_loop\.py:%d in wait_for_inner \(innermost '
        r'\S*/selectors\.py:\d+ in \S*select\)$'
        % (pid, pid, marker_line(SCRIPT, "nested")), res.stderr, re.M), \
        res.stderr[:4000]
    # and the outer task's step waits for 'inner' through it
    assert re.search(
        r'^  process %d: task "Task-1" stuck for (at least )?[0-9.]+s at '
        r"\S*nested_loop\.py:%d in main, waits on task 'inner' \(its loop "
        r"run again inside its step\)$"
        % (pid, marker_line(SCRIPT, "outer-step")), res.stderr, re.M), \
        res.stderr[:4000]
    causes = likely_causes(res.stderr)
    assert not any("event loop blocked" in c or "stuck task" in c
                   for c in causes), res.stderr[:4000]
    kinds = [c["kind"] for c in doc["causes"] if c["pid"] == pid]
    assert "loop_blocked" not in kinds and "stuck_task" not in kinds, \
        doc["causes"]


def test_nested_loop_blocked_names_the_inner_step(work):
    """A step of the nested loop that blocks: the loop is blocked, by the
    innermost step (the task 'inner'), not by the outer one that runs the
    loop again; and the tasks it holds up are the others, not the outer
    one, which waits for it anyway."""
    pid, res, doc = run_nested(work, "blocked", "5")
    causes = likely_causes(res.stderr)
    assert causes and re.match(
        r'^  process %d: event loop blocked: thread %d "MainThread" runs '
        r"task 'inner' and has not gone back to its loop \(stuck for "
        r"(at least )?[0-9.]+s\); 1 other task of the loop cannot run$"
        % (pid, pid), causes[0]), res.stderr[:4000]
    assert re.match(r"^      at \S*nested_loop\.py:%d in inner: "
                    r"time\.sleep\(3600\)" % marker_line(SCRIPT,
                                                         "inner-blocked"),
                    causes[1]), causes
    assert [c["kind"] for c in doc["causes"]][:1] == ["loop_blocked"], \
        doc["causes"]


def test_nested_loop_lock_deadlock(work):
    """main() holds an asyncio.Lock while it runs the loop again for
    'inner', which waits for that lock.  The lock's cause names its
    holder (the thread, in main()'s `async with`) and its waiter.
    Before, under nest_asyncio's Python Futures (a frame of
    Future.__await__ under every Lock.acquire()), the graph saw no wait
    on the lock: only "stuck task: inner waits on Future"."""
    pid, res, doc = run_nested(work, "lock", "3")
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes) if re.match(
        r"^  process %d: 1 waiting on asyncio\.Lock 0x[0-9a-f]+ \(locked, "
        r"1 waiter\) held by thread %d \(MainThread\) at nested_loop\.py:"
        r"%d in main \(taken at line %d\)$"
        % (pid, pid, marker_line(SCRIPT, "outer-lock") + 1,
           marker_line(SCRIPT, "outer-lock")), c)]
    assert len(head) == 1, res.stderr[:4000]
    assert any(re.match(
        r"^      task 'inner' at nested_loop\.py:%d in inner \(innermost "
        r"\S*locks\.py:\d+ in Lock\.acquire\)"
        % marker_line(SCRIPT, "inner-lock"), c)
        for c in causes[head[0] + 1:head[0] + 3]), causes
    assert "held" in [c["kind"] for c in doc["causes"]], doc["causes"]
