"""A task cancelled that goes on (targets/cancel_swallowed.py: it
catches the CancelledError in its loop, and main() awaits it after
cancel()): the dump says its cancel was requested, as the task's own
cancelling() does (3.11+; null before), and `run` names it the cause
of the hang.  Before, `run` said no likely cause stood out: the task
was asleep in asyncio.sleep(), idle by design."""

import re

import pytest

from conftest import (interpreter_or_skip, interpreters_importing,
                      marker_line, run_coroscope, target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("cancel_swallowed.py")
WITH_ANYIO = interpreters_importing(("3.11-debian",), "anyio")


@pytest.mark.parametrize("ident", ("3.10", "3.11-debian", "3.12", "3.14t"))
def test_dump_says_cancel_requested(keeper, ident):
    interp = interpreter_or_skip(ident)
    target = keeper.start_target(interp, "cancel_swallowed.py")
    ready = target.ready
    doc = run_coroscope("dump", "--json", target.pid).json()
    tasks = dict((int(t["id"], 16), t) for t in doc["tasks"])
    for who in ("task", "other"):
        assert tasks[ready[who]["id"]]["cancels_requested"] == \
            ready[who]["cancelling"], (who, ready, tasks)
    text = run_coroscope("dump", target.pid).stdout
    line = [l for l in text.splitlines()
            if "(T) stubborn 0x%x " % ready["task"]["id"] in l]
    assert len(line) == 1, text
    assert (", cancel requested" in line[0]) == \
        bool(ready["task"]["cancelling"]), line
    assert "cancel requested" not in text.replace(line[0], ""), text


def run_causes_first_stubborn(py, mode, requests):
    """run's causes for cancel_swallowed.py's `mode` under py, timed
    out, the first saying task 'stubborn' goes on though cancelled with
    `requests` (a pattern) outstanding."""
    res = coroscope_run(["--timeout", "4", "--", py.path, SCRIPT, "-",
                         mode])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    assert causes and re.match(
        r"^  process \d+: task 'stubborn' goes on though cancelled \(%s "
        r"outstanding, for (at least )?[0-9.]+s\): it caught the "
        r"CancelledError, or its cleanup waits$" % requests, causes[0]), \
        res.stderr[:3000]
    return causes


@pytest.mark.parametrize("ident,mode", (
    ("3.12", "parked"), ("3.12", "loop"), ("3.12", "group"),
    # (the sanitizer's pass: 3.14's group exit is _aexit())
    ("3.14t", "loop"), ("3.14t", "group")))
def test_run_names_the_task_that_goes_on(ident, mode, work):  # noqa: F811
    """Parked, or moving all along (a swallow in a loop of short
    sleeps: before, nothing was seen stuck and no cause named it), or a
    TaskGroup's child whose parent waits in the group's exit, cancelled
    by the group too (the child is the cause, not the parent: before,
    the parent came first)."""
    causes = run_causes_first_stubborn(interpreter_or_skip(ident), mode,
                                       r"1 cancel request")
    awaiter = ("main" if mode != "group" else "in_group",
               marker_line(SCRIPT, "awaits-stubborn" if mode != "group"
                           else "group"))
    assert re.match(
        r"^      task 'stubborn' at cancel_swallowed\.py:%d in "
        r"stubborn_worker .*awaited by task 'Task-1' at "
        r"cancel_swallowed\.py:%d in %s" % (
            marker_line(SCRIPT, "swallowed-loop" if mode == "loop"
                        else "swallowed"), awaiter[1], awaiter[0]),
        causes[1]), causes
    assert not any("'Task-1' goes on" in c for c in causes), causes


@pytest.mark.skipif(not WITH_ANYIO, reason="anyio is not installed for "
                    "Debian's 3.11 (python3-anyio), or COROSCOPE_TEST_PYTHONS "
                    "left that interpreter out")
def test_run_names_the_task_anyio_cancels_again(work):  # noqa: F811
    """In an anyio task group on asyncio, cancelled: its scope cancels
    the swallowing child again at each turn of the loop, so the child
    runs at every sample and the thread is busy.  The child is the
    cause, first (before, only "MainThread is busy, 100% of a CPU"); the
    group's owner, in its exit, is not."""
    causes = run_causes_first_stubborn(WITH_ANYIO[0], "anyio",
                                       r"\d+ cancel requests?")
    # (parked, or running its catch: "running: task stubborn at ...")
    assert any("cancel_swallowed.py:%d in stubborn_worker" % marker_line(
        SCRIPT, mark) in causes[1] for mark in ("swallowed", "catch-work")), \
        causes
    assert sum(" goes on though cancelled" in c for c in causes) == 1, \
        causes
