"""asyncio.sleep()'s timers: a task asleep says when it wakes.

targets/sleepers.py puts three alike tasks to sleep for an hour (a second
apart), one on a second loop whose time() is a clock of its own, one for
a tenth of a second on a loop then blocked (its timer past due), and one
on an Event; each sleeper records when its loop's clock says it is due.
coroscope reads each timer off its loop's _scheduled heap: the due time
in the loop's clock ("sleep_until"), and, for a loop on time.monotonic(),
how long from the read ("wakes_in_s": the due time less the target's
clock at the stop, which the test brackets with its own, the same clock).
Every interpreter.
"""

import re
import time

from conftest import marker_line, run_coroscope, target_script

SCRIPT = target_script("sleepers.py")
# Between a sleeper's record of its due time and its loop's timer: the
# same loop.time() plus the same delay, a few statements later.
SLACK = 1.0
# The document's seconds are rounded to the millisecond.
ROUND = 0.0006


def outermost(task):
    return task["stack"][-1]["function"] if task["stack"] else None


def test_sleeping_tasks_say_when_they_wake(keeper, interp):
    target = keeper.start_target(interp, "sleepers.py")
    due = target.ready["due"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    tasks = dict((t["id"], t) for t in doc["tasks"])
    nappers = [t for t in tasks.values() if outermost(t) == "napper"]
    assert len(nappers) == 3, doc["tasks"]
    nap = marker_line(SCRIPT, "nap")
    for t, want in zip(sorted(nappers,
                              key=lambda t: t["awaiting"]["sleep_until"]),
                       sorted(due["napper-%d" % i] for i in range(3))):
        assert t["stack"][-1]["line"] == nap, t
        waits = t["awaiting"]
        assert waits["type"] == "Future", t
        assert want - ROUND <= waits["sleep_until"] < want + SLACK, \
            (want, t)
        # the target's clock at the stop lies between the test's two
        # readings of the same clock (milliseconds in the document)
        assert waits["sleep_until"] - after - 2 * ROUND <= \
            waits["wakes_in_s"] <= waits["sleep_until"] - before + \
            2 * ROUND, (before, after, t)
    own = [t for t in tasks.values() if outermost(t) == "own_napper"]
    assert len(own) == 1, doc["tasks"]
    # its loop's clock is not time.monotonic(): when, but not how soon
    assert due["own"] - ROUND <= own[0]["awaiting"]["sleep_until"] < \
        due["own"] + SLACK, own
    assert own[0]["awaiting"]["wakes_in_s"] is None, own
    listener = [t for t in tasks.values() if outermost(t) == "listener"]
    assert len(listener) == 1, doc["tasks"]
    assert "sleep_until" not in listener[0]["awaiting"], listener
    assert "wakes_in_s" not in listener[0]["awaiting"], listener
    # a timer past due, its loop blocked in time.sleep(): negative
    short = [t for t in tasks.values() if outermost(t) == "short_napper"]
    assert len(short) == 1, doc["tasks"]
    waits = short[0]["awaiting"]
    assert due["short"] - ROUND <= waits["sleep_until"] < \
        due["short"] + SLACK, short
    assert waits["sleep_until"] - after - 2 * ROUND <= waits["wakes_in_s"] \
        <= waits["sleep_until"] - before + 2 * ROUND < -0.1, \
        (before, after, short)

    text = run_coroscope("dump", target.pid)
    assert text.returncode == 0, text
    m = re.search(r"^ +[|`]- \(T\) 3 tasks like this: \S+ \.\. \S+ pending, "
                  r"sleep in asyncio\.sleep, wake in ([0-9.]+)s \.\. "
                  r"([0-9.]+)s$", text.stdout, re.M)
    assert m, text.stdout
    now = time.monotonic()
    lo, hi = float(m.group(1)), float(m.group(2))
    first, last = due["napper-0"], due["napper-2"]
    assert first - now - 0.1 <= lo <= first + SLACK - before, (lo, due)
    assert last - now - 0.1 <= hi <= last + SLACK - before, (hi, due)
    m = re.search(r"^`- \(T\) \S+ 0x[0-9a-f]+ pending, sleeps in "
                  r"asyncio\.sleep until loop time ([0-9.]+)$",
                  text.stdout, re.M)
    assert m, text.stdout
    assert due["own"] - 0.05 <= float(m.group(1)) < due["own"] + SLACK, \
        (m.group(0), due)
    m = re.search(r"^[|`]- \(T\) \S+ 0x[0-9a-f]+ pending, sleeps in "
                  r"asyncio\.sleep, overdue by ([0-9.]+)s$", text.stdout, re.M)
    assert m, text.stdout
    assert before - due["short"] - SLACK - 0.1 < float(m.group(1)) <= \
        now - due["short"] + 0.1, (m.group(0), due)
