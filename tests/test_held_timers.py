"""How long a lock stays held, and when each wait for it ends.

targets/held_asleep.py holds an asyncio.Lock in a task asleep for an
hour inside its `async with`; "patient" waits for the lock under
wait_for(..., 600) and three alike tasks under 601-603 s.  Before,
`run`'s cause named the holder and its waiters without a word of time:
whether the lock would be free in a second or in an hour, and whether a
waiter would give up, took reading the dump's task tree.  Now:

- run's holder line says it sleeps and when it wakes; each waiter when
  its timeout ends the wait; a waiter that is the task wait_for() made
  (up to 3.11: only asyncio's frames) names the task awaiting it, at the
  program's line, with that one's timeout; alike waiters as a range;
- run's list of stuck tasks says their timeouts;
- the dump's Holders line says the holder sleeps, its Waits a waiter's
  timeout.

Each time is checked against the due time the target recorded (the same
clock as the test's time.monotonic()), less the stop, bracketed by the
test's clock before and after.
"""

import json
import re
import time

import pytest

from conftest import interpreter_or_skip, marker_line, run_coroscope, \
    target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("held_asleep.py")
RUN_TIMEOUT = 3
# Between a due time's record and its timer: a few statements.
SLACK = 0.3
STUCK = r"(?: \(stuck for (?:at least )?[0-9.]+s\))?"


def within(seconds, due, before, after):
    """seconds (said with a tenth) from a read between before and after
    to due (a timer set at most SLACK after it was recorded)."""
    return due - after - 0.05 <= float(seconds) <= \
        due + SLACK - before + 0.05


def lines_after(lines, i, n):
    return lines[i + 1:i + 1 + n]


def one_match(pattern, lines):
    """The match of the one line of lines that pattern matches."""
    found = [m for m in (re.match(pattern, ln) for ln in lines) if m]
    assert len(found) == 1, (pattern, lines)
    return found[0]


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_run_says_how_long_the_lock_stays_held(ident, work):  # noqa: F811
    py = interpreter_or_skip(ident)
    ready = work / "ready"
    start = time.monotonic()
    res = coroscope_run(["--timeout", str(RUN_TIMEOUT), "--", py.path,
                         SCRIPT, str(ready)])
    end = time.monotonic()
    assert res.returncode == 124, res
    due = json.loads(ready.read_text())
    # the read came after the timeout, before run returned
    before = start + RUN_TIMEOUT
    causes = likely_causes(res.stderr)
    heads = [i for i, c in enumerate(causes)
             if "waiting on asyncio.Lock" in c]
    assert len(heads) == 1, res.stderr[:6000]
    take = marker_line(SCRIPT, "held-take")
    sleep = marker_line(SCRIPT, "held-sleep")
    # (3.6 and 3.7 name a task by its coroutine: 'hold')
    assert re.search(r"held by task '[^']+' at held_asleep.py:%d in hold "
                     r"\(taken at line %d\)" % (sleep, take),
                     causes[heads[0]]), causes
    detail = lines_after(causes, heads[0], 3)
    m = re.match(r"^ +holder task '[^']+' at \S*held_asleep\.py:%d in hold "
                 r"\(innermost \S*tasks\.py:\d+ in \S*sleep\)%s, sleeps in "
                 r"asyncio\.sleep, wakes in ([0-9.]+)s$" % (sleep, STUCK),
                 detail[0])
    assert m, causes
    assert within(m.group(1), due["wakes"], before, end), (due, causes)

    patient = marker_line(SCRIPT, "patient-wait")
    alike = marker_line(SCRIPT, "alike-wait")
    if tuple(int(x) for x in py.version.split(".")[:2]) < (3, 12):
        # wait_for()'s own task waits on the lock; "patient" on it
        m = one_match(r"^ +task '[^']+' at \S*locks\.py:\d+ in \S*acquire%s, "
                     r"awaited by task '[^']+' at \S*held_asleep\.py:%d in "
                     r"patient \(innermost \S*tasks\.py:\d+ in wait_for\), "
                     r"times out in ([0-9.]+)s$" % (STUCK, patient),
                     detail[1:])
        group = one_match(r"^ +3 tasks at \S*locks\.py:\d+ in \S*acquire%s, "
                         r"each awaited by a task at \S*held_asleep\.py:%d "
                         r"in impatient \(innermost \S*tasks\.py:\d+ in "
                         r"wait_for\), time out in ([0-9.]+)s \.\. "
                         r"([0-9.]+)s: '[^']+', '[^']+', '[^']+'$"
                         % (STUCK, alike), detail[1:])
    else:
        m = one_match(r"^ +task 'patient' at \S*held_asleep\.py:%d in patient "
                     r"\(innermost \S*locks\.py:\d+ in \S*acquire\)%s, "
                     r"times out in ([0-9.]+)s$" % (patient, STUCK),
                     detail[1:])
        group = one_match(r"^ +3 tasks at \S*held_asleep\.py:%d in impatient "
                         r"\(innermost \S*locks\.py:\d+ in \S*acquire\)%s, "
                         r"time out in ([0-9.]+)s \.\. ([0-9.]+)s: "
                         r"'impatient-1', 'impatient-2', 'impatient-3'$"
                         % (alike, STUCK), detail[1:])
    assert m, causes
    assert within(m.group(1), due["patient"], before, end), (due, causes)
    assert group, causes
    assert within(group.group(1), due["impatient-1"], before, end), causes
    assert within(group.group(2), due["impatient-3"], before, end), causes

    # the list of what the samples saw stuck: "patient" with its timeout
    listed = [ln for ln in res.stderr.splitlines()
              if re.match(r'^  process \d+: task "[^"]+" stuck for .* at '
                          r'\S*held_asleep\.py:%d in patient' % patient, ln)]
    assert len(listed) == 1, res.stderr[:6000]
    m = re.search(r", times out in ([0-9.]+)s$", listed[0])
    assert m, listed
    assert within(m.group(1), due["patient"], before, end), listed


def test_dump_says_the_holder_sleeps_and_the_waits_time_out(keeper, interp):
    target = keeper.start_target(interp, "held_asleep.py")
    due = target.ready
    before = time.monotonic()
    text = run_coroscope("dump", target.pid).stdout
    after = time.monotonic()
    take = marker_line(SCRIPT, "held-take")
    sleep = marker_line(SCRIPT, "held-sleep")
    m = re.search(r"^  task '[^']+' at \S*held_asleep\.py:%d in hold, sleeps "
                  r"in asyncio\.sleep, wakes in ([0-9.]+)s, holds "
                  r"asyncio\.Lock 0x[0-9a-f]+ \(locked, 4 waiters\), taken "
                  r"at line %d: 4 waiting$" % (sleep, take), text, re.M)
    assert m, text
    assert within(m.group(1), due["wakes"], before, after), (due, text)
    # "patient"'s row under Waits: itself waiting on the lock (3.12+) or
    # on the task wait_for() made, with its timeout either way
    patient = marker_line(SCRIPT, "patient-wait")
    m = re.search(r"^  task '[^']+' at \S*held_asleep\.py:%d in patient "
                  r"\(innermost \S+ in \S+\), times out in ([0-9.]+)s\n"
                  r"    waits for: " % patient, text, re.M)
    assert m, text
    assert within(m.group(1), due["patient"], before, after), (due, text)
    # the alike "impatient" tasks' merged row, from 3.12 the lock's
    # waiters themselves (before, wait_for()'s tasks are): their
    # timeouts' span
    if tuple(int(x) for x in interp.version.split(".")[:2]) >= (3, 12):
        m = re.search(r"^  3 tasks like task 'impatient-1' at \S*held_asleep"
                      r"\.py:%d in impatient .* \.\. task 'impatient-3', "
                      r"time out in ([0-9.]+)s \.\. ([0-9.]+)s$"
                      % marker_line(SCRIPT, "alike-wait"), text, re.M)
        assert m, text
        assert within(m.group(1), due["impatient-1"], before, after), \
            (due, m.group(0))
        assert within(m.group(2), due["impatient-3"], before, after), \
            (due, m.group(0))
