"""How long each thread has been off its CPU, as `dump` says it (read
before the stop: attach/offcpu.c), and as `watch` and `run` count it
into a thread's time without progress at their first sample.

targets/offcpu_target.py notes time.monotonic() just before its thread
'blocked' takes a lock forever, and when that thread last ran at the
latest (settled_at); the test reads the same clock before and after
the dump.  The kernel's figure is on the clock of the thread's
CPU, which leaves out that CPU's stolen and interrupt time: it may fall
a little short of the wall time, never beyond it.
"""

import re
import time

import pytest

from conftest import (control_interpreter, interpreter_or_skip,
                      interpreters_importing, run_coroscope, target_script,
                      task_ids)

BLOCKED_FOR = 1.5        # seconds the thread is blocked before the dump
SHORT_SHARE = 0.9        # the most stolen and interrupt time may take


def settled_target(keeper, interp, blocked_for=BLOCKED_FOR):
    """offcpu_target.py, its thread blocked blocked_for s or more and
    never stopped by us."""
    t = keeper.start_target(interp, "offcpu_target.py")
    while time.monotonic() - t.ready["settled_at"] < blocked_for:
        time.sleep(0.05)
    return t


@pytest.fixture
def target(interp, keeper):
    return settled_target(keeper, interp)


def test_off_cpu_as_json_and_text(target):
    tids, blocked_at = target.ready["tids"], target.ready["blocked_at"]
    settled_at = target.ready["settled_at"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    threads = dict((t["tid"], t) for t in doc["threads"])
    off = threads[tids["blocked"]]["off_cpu_s"]
    assert off is not None and \
        (before - settled_at) * SHORT_SHARE - 0.05 <= off <= \
        after - blocked_at + 0.01, (off, before - settled_at,
                                    after - blocked_at)
    # running or runnable all along: 0
    assert threads[tids["spinner"]]["off_cpu_s"] == 0, \
        threads[tids["spinner"]]
    # The text says the same.  (The first dump's stop made every thread
    # run: the blocked one last ran at that stop now.)
    text = run_coroscope("dump", target.pid).stdout
    m = re.search(r"^Thread %d \"blocked\" \(last ran (\d+\.\d)s ago\)$"
                  % tids["blocked"], text, re.M)
    assert m and float(m.group(1)) < after - blocked_at, text
    assert re.search(r"^Thread %d \"spinner\" \(running\)"
                     % tids["spinner"], text, re.M), text


def test_watch_counts_the_time_before_it(keeper, interp):
    """At watch's first sample (before any stop of its own) the blocked
    thread had been off its CPU for a while: stuck since then (in whole
    seconds), so stuck after a 1 s watch whose threshold is 2 s, for
    more than the watch."""
    target = settled_target(keeper, interp, 2.5)
    tids, settled_at = target.ready["tids"], target.ready["settled_at"]
    before = time.monotonic()
    res = run_coroscope("watch", "--json", "--for", "1s", "--interval",
                        "0.5s", "--stuck", "2s", target.pid)
    assert res.returncode == 0, res
    threads = dict((t["tid"], t) for t in res.json()["threads"])
    blocked = threads[tids["blocked"]]
    assert blocked["state"] == "stuck", blocked
    assert blocked["stuck_for"] >= \
        int((before - settled_at) * SHORT_SHARE - 0.05) + 0.95, \
        (blocked, before - settled_at)


def test_run_counts_the_time_before_its_samples(tmp_path):
    """`run`'s samples cover the end of the timeout only; the blocked
    thread's cause counts from before them: it was off its CPU from the
    start of the command (settled well within the 6 s timeout)."""
    from test_run import coroscope_run, likely_causes, sweep
    ready = str(tmp_path / "ready")
    try:
        res = coroscope_run(["--timeout", "6", "--",
                             control_interpreter().path,
                             target_script("offcpu_target.py"), ready])
    finally:
        sweep(str(tmp_path))
    assert res.returncode == 124, res
    # (the wait-for graph's cause names it "(blocked)", on the lock)
    causes = [c for c in likely_causes(res.stderr)
              if ('"blocked"' in c or "(blocked)" in c) and
              "stuck for at least" in c]
    assert len(causes) == 1, res.stderr
    m = re.search(r"stuck for at least (\d+\.\d)s", causes[0])
    # the command ran 6 s; the thread blocked within its first second
    # or two; the samples cover the last 2 s (counted alone: 2.0 s)
    assert m and float(m.group(1)) >= 3.5, causes


def quiet_for(pid, seconds, timeout=60.0):
    """Wait until no thread of pid has run for seconds (the kernel's
    counts of their runs, /proc/PID/task/*/schedstat, unchanged that
    long); return the monotonic time the last change was seen."""
    def runs():
        counts = {}
        for tid in task_ids(pid):
            try:
                with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
                    counts[tid] = int(f.read().split()[2])
            except OSError:
                pass
        return counts
    last, since = runs(), time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = runs()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return since
    pytest.fail("pid %d never stayed off its CPUs for %g s" % (pid, seconds))


@pytest.mark.parametrize("ident", ("3.8", "3.13", "3.14"))
def test_watch_counts_the_quiet_before_it_for_tasks(keeper, ident):
    """No task moves while no thread runs: at watch's first sample the
    tasks of a process whose threads had all slept 2.5 s are stuck
    since then, like its threads, so stuck after a 1 s watch whose
    threshold is 2 s.  (Before, only threads were: the tasks of a
    service hung for minutes were "active" for the watch's first 2 s.)"""
    interp = interpreter_or_skip(ident)
    target = keeper.start_target(interp, "run_stuck_task.py")
    since = quiet_for(target.pid, 2.5)
    before = time.monotonic()
    res = run_coroscope("watch", "--json", "--for", "1s", "--interval",
                        "0.5s", "--stuck", "2s", target.pid)
    assert res.returncode == 0, res
    doc = res.json()
    tasks = [t for t in doc["tasks"] if t["name"] in
             ("stuck_leaf", "stuck_parent", "napper")]
    assert len(tasks) == 3, doc["tasks"]
    for task in tasks:
        # (asleep in asyncio.sleep(3600): idle, as long without progress)
        assert task["state"] == ("idle" if task["name"] == "napper" else
                                 "stuck"), task
        assert task["stuck_for"] >= \
            int((before - since) * SHORT_SHARE) + 0.95, (task, before - since)


def test_watch_counts_the_quiet_before_it_for_greenlets(keeper):
    """The same for gevent's greenlets, whose thread had slept (the
    hub in epoll_wait, every greenlet parked): stuck from the first
    sample; the one not started says so where a place would be."""
    found = interpreters_importing(("3.11-debian",), "gevent")
    if not found:
        pytest.skip("Debian's python3.11 with python3-gevent is not here, "
                    "or COROSCOPE_TEST_PYTHONS left it out")
    target = keeper.start_target(found[0], "gevent_waits.py")
    since = quiet_for(target.pid, 2.5)
    before = time.monotonic()
    res = run_coroscope("watch", "--json", "--for", "1s", "--interval",
                        "0.5s", "--stuck", "2s", target.pid)
    assert res.returncode == 0, res
    greenlets = dict((g["name"], g) for g in res.json()["greenlets"]
                     if g["name"])
    for name in ("holder", "lock-waiter", "getter", "one", "two", "later"):
        g = greenlets[name]
        assert g["state"] == "stuck", g
        assert g["stuck_for"] >= \
            int((before - since) * SHORT_SHARE) + 0.95, (g, before - since)
    assert greenlets["later"]["where"] is None, greenlets["later"]
    text = run_coroscope("watch", "--for", "1s", "--interval", "0.5s",
                         "--stuck", "60s", target.pid).stdout
    assert re.search(r"greenlet 'later' \(0x[0-9a-f]+\) at \? "
                     r"\(not started\)$", text, re.M), text
