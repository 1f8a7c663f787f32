"""`run`'s causes for threads of the program's own code asleep in
time.sleep() all along the samples (targets/poll_forever.py): a loop
polling for a file that never appears, a forgotten long sleep.  Before,
with nothing else stuck, run said "no likely cause stands out"; now a
cause of kind "sleep", ranked low, names each, at its line with the
source, and the pytest test being run.  The tids are the threads' own
(threading.get_native_id() or gettid)."""

import re

import pytest

from conftest import marker_line, target_script
from test_run import pytest_causes, work  # noqa: F401
from test_run_reads import run_target

SCRIPT = target_script("poll_forever.py")
STUCK = r" \(stuck for at least [0-9.]+s\)$"
# A 0.4 s poll's sleep, when the dump finds more than 0.1 s of it left
# (one due sooner is left out, as a GIL wait's turn).  The dump's moment
# against the poll's is the command's start-up time modulo 0.4 s, much
# the same from run to run, but not on every machine: under pytest it
# fell within 0.1 s of the wake-up in 1 run of 8 here.
POLL_WAKES = r"(, wakes in 0\.[0-4]s)?"
# a loop seen running between samples, at the same line at each
POLLING = (r" \((stuck for at least [0-9.]+s|polling: it woke and slept "
           r"again at that line at every sample, [0-9.]+s)\)$")


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.14", "3.14t"))
def test_sleeping_threads_are_causes(ident, work):
    info, causes, doc, stderr = run_target(work, ident, SCRIPT)
    pid, tids = info["pid"], info["tids"]
    assert causes, stderr[:3000]
    for name, wakes, marker, source, seen in (
            ("MainThread", POLL_WAKES, "poll", r"time\.sleep\(every\)",
             POLLING),
            ("poller", r", wakes in 35\d\d\.\ds", "long-sleep",
             r"time\.sleep\(3600\)", STUCK)):
        head = [h for h in causes if re.match(
            r'^  process %d: thread %d "%s" sleeps in time\.sleep%s%s'
            % (pid, tids[name], name, wakes, seen), h)]
        assert len(head) == 1, (name, causes)
        detail = causes[head[0]]
        assert len(detail) == 1 and re.match(
            r"^at \S*poll_forever\.py:%d in \S+: %s  # MARK: %s$"
            % (marker_line(SCRIPT, marker), source, marker),
            detail[0]), detail
    kinds = [c["kind"] for c in doc["causes"] if c["pid"] == pid]
    assert kinds == ["sleep", "sleep"], doc["causes"]


def test_polling_test_is_named(work):
    """Under pytest: the test being run, as the graph's causes say it.
    (4 s: pytest's start took the first of 3 s's samples once, under a
    loaded clean-clone check, and the thread, seen at other lines first,
    was no poll.)"""
    res, causes = pytest_causes(work, SCRIPT, "test_poll.py")
    head = [i for i, c in enumerate(causes) if re.match(
        r'^  process \d+: thread \d+ "MainThread" sleeps in time\.sleep'
        + POLL_WAKES + POLLING, c)]
    assert len(head) == 1, res.stderr[:3000]
    assert causes[head[0] + 2].strip() == \
        "test being run: test_poll.py::test_poll_forever", causes


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_poll_begun_during_the_samples_is_a_cause(ident, work):
    """A poll that begins 2.5 s into a 4 s timeout (sampled from 2 s, the
    threshold 1 s), after work at another line: its sleep's ends say it
    woke (so it is not stuck), and it was not at its line from the first
    sample.  It is a poll all the same, at its line since it came there
    for longer than the threshold.  Between 2cfd657 and this test,
    nothing named it."""
    info, causes, _, stderr = run_target(work, ident, SCRIPT, "late",
                                         timeout="4")
    pid = info["pid"]
    head = [h for h in causes if re.match(
        r'^  process %d: thread %d "MainThread" sleeps in time\.sleep%s'
        r' \(polling: it woke and slept again at that line at every '
        r'sample since it came there, [0-9.]+s\)$'
        % (pid, pid, POLL_WAKES), h)]
    assert len(head) == 1, stderr[:3000]
    assert re.match(r"^at \S*poll_forever\.py:%d in wait_for: "
                    r"time\.sleep\(every\)  # MARK: poll$"
                    % marker_line(SCRIPT, "poll"), causes[head[0]][0]), \
        causes[head[0]]


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_fast_poll_is_a_cause(ident, work):
    """A poll every 0.1 s: the stop finds its sleep due within 0.1 s,
    whose deadline is left out; the C frames of the sleep say it."""
    info, causes, _, stderr = run_target(work, ident, SCRIPT, "fast")
    pid = info["pid"]
    head = [h for h in causes if re.match(
        r'^  process %d: thread %d "MainThread" sleeps in time\.sleep'
        r'(, wakes in 0\.[01]s)?%s' % (pid, pid, POLLING), h)]
    assert len(head) == 1, stderr[:3000]
