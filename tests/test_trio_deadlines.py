"""trio's deadlines: when trio.sleep() wakes a task, and when a cancel
scope's deadline ends its wait.

targets/trio_deadlines.py parks trio tasks in trio.sleep(), under
move_on_after() and fail_after() (nested: the first to come), under a
shielded scope (no timeout), in a thread's job it may not abandon (no
timeout either: the cancel waits for the thread), asleep under a shorter
deadline, and in
sleep_forever() under one; on trio's own clock, on anyio's trio backend,
and on trio.testing.MockClock (a clock of its own).  Each time is the
one the target recorded a moment before it set the timer, on
time.monotonic() (trio's SystemClock is time.perf_counter(), the same
clock on Linux, plus an offset coroscope takes off) and bracketed by
the test's own clock around the read; with MockClock, its own time.
Before, a trio task said nothing of either, and one asleep in
trio.sleep() was listed as stuck by `run`.

trio and anyio are Debian's packages: on /usr/bin/python3.11 only.
"""

import re
import subprocess
import time

import pytest

from conftest import (DEBIAN, interpreter, marker_line, run_coroscope,
                      target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("trio_deadlines.py")
DEBIAN_PY = interpreter("3.11-debian")
# Between the target's record and trio's timer: a few statements.
SLACK = 0.5
# The document's seconds are rounded to the millisecond.
ROUND = 0.0006


def has_trio():
    return DEBIAN_PY is not None and subprocess.run(
        [DEBIAN, "-c", "import trio, trio.testing, anyio"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


needs_trio = pytest.mark.skipif(
    not has_trio(), reason="needs /usr/bin/python3.11 with python3-trio "
    "and python3-anyio")


def check_at(value, want, mock):
    """A due time read (rounded) against the one recorded before the
    timer was set (exactly it on MockClock, whose time stands still)."""
    if mock:
        assert abs(value - want) <= ROUND, (value, want)
    else:
        assert want - ROUND <= value <= want + SLACK, (value, want)


def check_in(seconds, at, before, after, mock):
    """How long from the read: due time at less the target's clock at
    the stop, between the test's before and after; none on MockClock."""
    if mock:
        assert seconds is None
    else:
        assert at - after - 2 * ROUND <= seconds <= at - before + 2 * ROUND, \
            (seconds, at, before, after)


@needs_trio
@pytest.mark.parametrize("how", ("trio", "anyio", "mock"))
def test_each_task_says_its_deadlines(how, keeper):
    target = keeper.start_target(DEBIAN_PY, "trio_deadlines.py", how)
    due = target.ready["due"]
    mock = how == "mock"
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    tasks = dict((t["name"], t) for t in doc["tasks"]
                 if t["framework"] == "trio")
    # ("thread-job": a deadline cannot end its wait for a thread's job
    # it may not abandon; said to end it in 400 s, before, and nothing
    # once that had passed)
    for name in ("holder", "shielded", "thread-job"):
        assert tasks[name]["awaiting"] is None, tasks[name]
    sleeps = {"napper": "napper", "sleeper-under": "sleeper-under-wake"}
    timeouts = ("waiter", "nested", "sleeper-under", "forever-under",
                "abandonable-job")
    for name in set(sleeps) | set(timeouts):
        waits = tasks[name]["awaiting"]
        assert waits and waits["type"] == "CancelScope", tasks[name]
        if name in sleeps:
            check_at(waits["sleep_until"], due[sleeps[name]], mock)
            check_in(waits["wakes_in_s"], waits["sleep_until"], before,
                     after, mock)
        else:
            assert "sleep_until" not in waits, waits
        if name in timeouts:
            # ("nested": fail_after(800) inside move_on_after(900))
            check_at(waits["timeout_at"], due[name], mock)
            check_in(waits["times_out_in_s"], waits["timeout_at"], before,
                     after, mock)
        else:
            assert "timeout_at" not in waits, waits
    if target.ready["waiter-scope"]:
        assert int(tasks["waiter"]["awaiting"]["id"], 16) == \
            int(target.ready["waiter-scope"], 16), tasks["waiter"]


@needs_trio
@pytest.mark.parametrize("how", ("trio", "mock"))
def test_the_task_tree_says_them(how, keeper):
    target = keeper.start_target(DEBIAN_PY, "trio_deadlines.py", how)
    text = run_coroscope("dump", target.pid).stdout
    lines = dict((m.group(1), m.group(2)) for m in re.finditer(
        r"\(T\) (\S+) 0x[0-9a-f]+ pending \[trio\](.*)$", text, re.M))
    if how == "mock":
        assert lines["napper"] == \
            ", sleeps in trio.sleep until trio time 3600.0", lines
        assert lines["sleeper-under"] == (
            ", sleeps in trio.sleep until trio time 3600.0, times out at "
            "trio time 300.0"), lines
        return
    m = re.match(r"^, sleeps in trio\.sleep, wakes in ([0-9.]+)s$",
                 lines["napper"])
    assert m and 3590 < float(m.group(1)) <= 3600, lines
    m = re.match(r"^, sleeps in trio\.sleep, wakes in [0-9.]+s, times out "
                 r"in ([0-9.]+)s$", lines["sleeper-under"])
    assert m and 290 < float(m.group(1)) <= 300, lines
    assert re.match(r"^, waits for trio\.Lock \(locked, 1 waiter\) held by "
                    r"task 'holder', times out in [0-9.]+s$",
                    lines["nested"]), lines
    assert "times out" not in lines["shielded"], lines
    assert "times out" not in lines["thread-job"], lines
    assert re.search(r", times out in 4[0-9][0-9.]*s$",
                     lines["abandonable-job"]), lines


@needs_trio
def test_run_says_when_trio_waits_end(work):  # noqa: F811
    ready = work / "ready"
    res = coroscope_run(["--timeout", "3", "--", DEBIAN, SCRIPT, str(ready)])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    waiter = marker_line(SCRIPT, "trio-waiter")
    assert any(re.match(r"^ +task 'waiter' at trio_deadlines\.py:%d in waiter "
                        r"\(innermost \S+ in Event\.wait\) \(stuck for at "
                        r"least [0-9.]+s\), times out in 59\d\.\ds$"
                        % waiter, c) for c in causes), causes
    stuck = [i for i, c in enumerate(causes)
             if "stuck trio task: forever-under" in c]
    assert len(stuck) == 1, causes
    assert re.search(r", times out in 69\d\.\ds$", causes[stuck[0]]), causes
    assert ("trio_deadlines.py:%d in forever_under"
            % marker_line(SCRIPT, "trio-forever-under")
            in causes[stuck[0] + 1]), causes
    # asleep in trio.sleep: idle, not stuck
    assert re.search(r"idle by design, not listed: .*asleep in trio\.sleep "
                     r"\(2\)", res.stderr), res.stderr[:6000]
    assert not re.search(r'trio task "(napper|sleeper-under)" stuck',
                         res.stderr), res.stderr[:6000]
