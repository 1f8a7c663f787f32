"""Holds coroscope cannot be sure of are said to be unsure, and `run`
does not count a lock's waiters as blocked behind holders of which only
one can hold it.

targets/unsure_holders.py: an RLock taken by a bare acquire() (the
thread waits on), an RLock taken so by a thread that exited (its ident
perhaps reused by a later thread: the ready file says), a Lock entered
by two `with` blocks, one having released it by hand, and an RLock held
in a `with` (sure).  A thread waits for each at "# MARK: unsure-wait".
"""

import json
import re

import pytest

from conftest import (control_interpreter, interpreter_or_skip, marker_line,
                      run_coroscope, target_script)
from test_cli_hostile import run_coroscope_run
from test_run import likely_causes

SCRIPT = target_script("unsure_holders.py")
BY_IDENT = ("(the RLock names its thread ident, but no `with` on its "
            "stack took it: a bare acquire(), or a thread that exited "
            "holding it, whose ident this one reuses)")


def waits_line(text, waiter):
    m = re.search(r"^  thread \d+ \(%s\) at \S+:%d in wait_for\n"
                  r"    waits for: (.*)$" % (
                      re.escape(waiter), marker_line(SCRIPT, "unsure-wait")),
                  text, re.M)
    assert m, (waiter, text)
    return m.group(1)


def test_unsure_holds_said(keeper, interp):
    t = keeper.start_target(interp, "unsure_holders.py")
    res = run_coroscope("dump", t.pid)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    bare = waits_line(text, "waits-bare")
    assert re.search(r"held by thread \d+ \(bare\) .*" + re.escape(BY_IDENT),
                     bare), bare
    sure = waits_line(text, "waits-with")
    assert "held by thread" in sure and BY_IDENT not in sure, sure
    twice = waits_line(text, "waits-twice")
    assert re.search(r"held by one of thread \d+ \((entered|released)\)",
                     twice), twice
    assert len(re.findall(r"^  thread \d+ \((entered|released)\) .* may "
                          r"hold threading\.Lock .*\(one of 2 that entered "
                          r"it: only one can hold it\)", text, re.M)) == 2, \
        text
    exited = waits_line(text, "waits-exited")
    if t.ready["reused_by"]:
        # the thread reusing the exited one's ident: named, unsure
        who = t.ready["reused_by"][0]
        assert "(%s)" % who in exited and BY_IDENT in exited, exited
    else:
        assert "held by" not in exited, exited

    doc = json.loads(run_coroscope("dump", "--json", t.pid).stdout)
    g = doc["graph"]
    holds = [e for e in g["edges"] if e["kind"] == "holds"]
    by_ident = sorted(g["nodes"][e["from"]]["name"]
                      for e in holds if e.get("by_ident"))
    assert by_ident == sorted(["bare"] + t.ready["reused_by"]), holds


def test_run_counts_nobody_behind_an_unsure_holder(tmp_path):
    """One interpreter: the ranking is the same code on all."""
    py = control_interpreter()
    report = tmp_path / "report.json"
    code, err = run_coroscope_run(
        ["--timeout", "3", "--sample-last", "1", "--kill-after", "1",
         "--report", report, "--", py.path, SCRIPT, tmp_path / "ready"])
    assert code == 124, err
    causes = json.loads(report.read_text())["causes"]
    reused = json.loads((tmp_path / "ready").read_text())["reused_by"]
    # Every holder but "exits" (gone) waits on one event: 8 threads;
    # behind them "waits-with" (a sure hold) and the waiters of the
    # RLocks an ident names (counted: a bare acquire() is far the
    # commoner reason); not "waits-twice", behind the lock two `with`
    # blocks entered.
    behind = 8 + 1 + 1 + len(reused)
    assert re.match(r"8 waiting on threading\.Event 0x[0-9a-f]+ \(not "
                    r"set, 8 waiters\); %d blocked behind it in all$"
                    % behind, causes[0]["summary"]), causes[0]
    assert any("held by one of" in c["summary"] for c in causes), causes


RETAKEN = target_script("retaken_locks.py")


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
@pytest.mark.parametrize("mode", ("thread", "task"))
def test_a_lock_waited_for_in_its_own_with_has_no_holder(keeper, ident,
                                                          mode):
    """A thread (a task) releases its lock by hand inside its `with`,
    another takes it by a bare acquire(), and the first waits for it
    again in the same block (targets/retaken_locks.py).  The open `with`
    said the first held it: a lock cycle of one, and a deadlock that is
    none.  The frame that waits for the lock in its own `with` holds it
    no more, or it is a self-deadlock: the two look the same, and no
    hold is said."""
    t = keeper.start_target(interpreter_or_skip(ident), "retaken_locks.py",
                            mode)
    res = run_coroscope("dump", t.pid)
    assert res.returncode == 0, res.stderr
    where = (r"retaken_locks\.py:%d in retakes(?:_task)?"
             % marker_line(RETAKEN, "retake-" + mode))
    assert re.search(r"^  (thread \d+ \(retakes\)|task '[^']+') at %s(?: "
                     r"\(innermost [^)]*\))?\n    waits for: (threading|"
                     r"asyncio)\.Lock 0x[0-9a-f]+ \(locked(?:, 1 waiter)?\)"
                     r",? holder unknown$" % where, res.stdout, re.M), \
        res.stdout
    assert "Wait cycles" not in res.stdout, res.stdout
    g = json.loads(run_coroscope("dump", "--json", t.pid).stdout)["graph"]
    assert g["cycles"] == [], g["cycles"]
    assert not [e for e in g["edges"] if e["kind"] == "holds"], g["edges"]


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_run_names_a_lock_retried_with_a_timeout(ident, tmp_path):
    """`while not lock.acquire(timeout=0.3)` while another thread sleeps
    holding the lock: the retrying thread runs between samples, and a
    lock all of whose waiters moved was left out as one changing hands
    (a queue being fed); nothing named it.  Its holder stood still: the
    lock is a cause, its waiter retrying at its line (or stuck, when
    its wakes fell among the samples' stops)."""
    py = interpreter_or_skip(ident)
    ready = tmp_path / "ready"
    code, err = run_coroscope_run(
        ["--timeout", "4", "--", py.path, RETAKEN, ready, "poll"])
    assert code == 124, err
    tids = json.loads(ready.read_text())["tids"]
    causes = likely_causes(err)
    head = [i for i, c in enumerate(causes) if re.match(
        r"  process \d+: 1 waiting on threading\.Lock 0x[0-9a-f]+ \(locked\) "
        r"held by thread %d \(holder\) at retaken_locks\.py:%d in holder "
        r"\(taken at line %d\)$" % (tids["holder"],
                                    marker_line(RETAKEN, "poll-holder"),
                                    marker_line(RETAKEN, "poll-holder") - 2),
        c)]
    assert head == [0], err[:3000]
    assert any(re.match(
        r"      thread %d \(poller\) at retaken_locks\.py:%d in poller "
        r"\((woke and waited again at that line at every sample(?: but "
        r"one| since it came there)?, |stuck for (at least )?)[0-9.]+s\)"
        % (tids["poller"], marker_line(RETAKEN, "poll")), c)
        for c in causes[1:4]), causes
