"""asyncio's timers: a task asleep says when it wakes, a task under a
timeout when that ends its wait.

targets/sleepers.py puts three alike tasks to sleep for an hour (a second
apart), one on a second loop whose time() is a clock of its own, one for
a tenth of a second on a loop then blocked (its timer past due), and one
on an Event; one in asyncio.wait_for() for 900 s, and (3.11+) one asleep
inside asyncio.timeout(1800); each records when its loop's clock says
its timer is due.  coroscope reads each timer off its loop's _scheduled
heap: the due time in the loop's clock ("sleep_until", "timeout_at"),
and, for a loop on time.monotonic(), how long from the read
("wakes_in_s", "times_out_in_s": the due time less the target's clock at
the stop, which the test brackets with its own, the same clock).  Every
interpreter.
"""

import re
import time

import pytest

from conftest import (interpreter_or_skip, interpreters_importing,
                      marker_line, run_coroscope, target_script)

SCRIPT = target_script("sleepers.py")
# Between a sleeper's record of its due time and its loop's timer: the
# same loop.time() plus the same delay, a few statements later.
SLACK = 1.0
# The document's seconds are rounded to the millisecond.
ROUND = 0.0006


def outermost(task):
    return task["stack"][-1]["function"] if task["stack"] else None


def check_in(waits, at_key, in_key, want, before, after):
    """waits[at_key] is the timer recorded due at want; waits[in_key] that
    less the target's clock at the stop, between before and after."""
    assert want - ROUND <= waits[at_key] < want + SLACK, (want, waits)
    assert waits[at_key] - after - 2 * ROUND <= waits[in_key] <= \
        waits[at_key] - before + 2 * ROUND, (before, after, waits)


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
        # the target's clock at the stop lies between the test's two
        # readings of the same clock (milliseconds in the document)
        check_in(waits, "sleep_until", "wakes_in_s", want, before, after)
        assert "timeout_at" not in waits, t
    own = [t for t in tasks.values() if outermost(t) == "own_napper"]
    assert len(own) == 1, doc["tasks"]
    # its loop's clock is not time.monotonic(): when, but not how soon
    assert due["own"] - ROUND <= own[0]["awaiting"]["sleep_until"] < \
        due["own"] + SLACK, own
    assert own[0]["awaiting"]["wakes_in_s"] is None, own
    listener = [t for t in tasks.values() if outermost(t) == "listener"]
    assert len(listener) == 1, doc["tasks"]
    assert set(listener[0]["awaiting"]) == {"id", "type"}, listener
    # wait_for(): a timeout, no sleep (up to 3.11 the timer releases the
    # future the task awaits, from 3.12 a Timeout cancels the task)
    waiting = [t for t in tasks.values() if outermost(t) == "waiting_for"]
    assert len(waiting) == 1, doc["tasks"]
    check_in(waiting[0]["awaiting"], "timeout_at", "times_out_in_s",
             due["wait_for"], before, after)
    assert "sleep_until" not in waiting[0]["awaiting"], waiting
    # running (blocking its loop) under asyncio.timeout() on 3.11+: it
    # awaits nothing, and its timeout is said nowhere
    blocker = [t for t in tasks.values() if outermost(t) == "blocker"]
    assert len(blocker) == 1 and blocker[0]["state"] == "running", blocker
    assert blocker[0]["awaiting"] is None, blocker
    timed = [t for t in tasks.values() if outermost(t) == "timed_napper"]
    assert len(timed) == ("timed-sleep" in due), doc["tasks"]
    for t in timed:  # asleep inside asyncio.timeout(): both
        check_in(t["awaiting"], "sleep_until", "wakes_in_s",
                 due["timed-sleep"], before, after)
        check_in(t["awaiting"], "timeout_at", "times_out_in_s",
                 due["timed-timeout"], before, after)
    # a timer past due, its loop blocked in time.sleep(): negative
    short = [t for t in tasks.values() if outermost(t) == "short_napper"]
    assert len(short) == 1, doc["tasks"]
    waits = short[0]["awaiting"]
    assert due["short"] - ROUND <= waits["sleep_until"] < \
        due["short"] + SLACK, short
    assert waits["sleep_until"] - after - 2 * ROUND <= waits["wakes_in_s"] \
        <= waits["sleep_until"] - before + 2 * ROUND < -0.1, \
        (before, after, short)
    # past due too, its timer off the heap in _ready (the loop blocked
    # by the callback run just before it): from sleep()'s own handle
    ready = [t for t in tasks.values() if outermost(t) == "ready_napper"]
    assert len(ready) == 1, doc["tasks"]
    waits = ready[0]["awaiting"]
    assert "sleep_until" in waits, ready
    assert due["ready"] - ROUND <= waits["sleep_until"] < \
        due["ready"] + SLACK, ready
    assert waits["sleep_until"] - after - 2 * ROUND <= waits["wakes_in_s"] \
        <= waits["sleep_until"] - before + 2 * ROUND < -0.1, \
        (before, after, ready)

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
    assert re.search(r"^[|`]- \(T\) \S+ 0x[0-9a-f]+ running$", text.stdout,
                     re.M), text.stdout
    m = re.search(r"^[|`]- \(T\) \S+ 0x[0-9a-f]+ pending, sleeps in "
                  r"asyncio\.sleep, overdue by ([0-9.]+)s$", text.stdout, re.M)
    assert m, text.stdout
    assert before - due["short"] - SLACK - 0.1 < float(m.group(1)) <= \
        now - due["short"] + 0.1, (m.group(0), due)
    m = re.search(r"^ +[|`]- \(T\) \S+ 0x[0-9a-f]+ pending, "
                  r"(?!.*asyncio\.sleep).*, times out in ([0-9.]+)s$",
                  text.stdout, re.M)
    assert m, text.stdout
    assert due["wait_for"] - now - 0.1 <= float(m.group(1)) <= \
        due["wait_for"] + SLACK - before, (m.group(0), due)
    if timed:
        m = re.search(r"^ +[|`]- \(T\) \S+ 0x[0-9a-f]+ pending, sleeps in "
                      r"asyncio\.sleep, wakes in ([0-9.]+)s, times out in "
                      r"([0-9.]+)s$", text.stdout, re.M)
        assert m, text.stdout
        assert due["timed-sleep"] - now - 0.1 <= float(m.group(1)) <= \
            due["timed-sleep"] + SLACK - before, (m.group(0), due)
        assert due["timed-timeout"] - now - 0.1 <= float(m.group(2)) <= \
            due["timed-timeout"] + SLACK - before, (m.group(0), due)


def test_watch_calls_a_sleeping_task_idle(keeper, interp):
    """`watch` as the dump: a task asleep in asyncio.sleep() is idle (its
    loop's timer wakes it; before, "stuck" after --stuck), says when it
    wakes and drops "waits on Future in sleep"; one whose timer is past
    due (its loop blocked) is not idle, and says how long overdue; a
    timeout is said after what the task waits on.  JSON: the dump's
    timer members, from the last sample (between the watch's start and
    end)."""
    target = keeper.start_target(interp, "sleepers.py")
    due = target.ready["due"]
    before = time.monotonic()
    res = run_coroscope("watch", "--json", "--for", "0.6s", "--interval",
                        "0.2s", "--stuck", "0.1s", target.pid)
    after = time.monotonic()
    assert res.returncode == 0, res
    tasks = res.json()["tasks"]
    by = {}
    for t in tasks:
        by.setdefault(t["where"]["function"], []).append(t)
    nappers = sorted(by["napper"], key=lambda t: t["sleep_until"])
    assert len(nappers) == 3, tasks
    for t, i in zip(nappers, range(3)):
        assert t["state"] == "idle" and t["waits_on"] is None, t
        assert t["idle"] == "asleep in asyncio.sleep", t
        check_in(t, "sleep_until", "wakes_in_s", due["napper-%d" % i],
                 before, after)
        assert t["timeout_at"] is None and t["times_out_in_s"] is None, t
    own, = by["own_napper"]
    assert own["state"] == "idle" and own["wakes_in_s"] is None, own
    assert due["own"] - ROUND <= own["sleep_until"] < due["own"] + SLACK
    short, = by["short_napper"]
    assert short["state"] == "stuck" and short["wakes_in_s"] < -0.1, short
    assert short["idle"] is None, short
    waiting, = by["waiting_for"]
    assert waiting["state"] == "stuck" and waiting["sleep_until"] is None
    check_in(waiting, "timeout_at", "times_out_in_s", due["wait_for"],
             before, after)
    listener, = by["listener"]
    assert listener["state"] == "stuck", listener
    assert listener["sleep_until"] is listener["timeout_at"] is None

    res = run_coroscope("watch", "--for", "0.6s", "--interval", "0.2s",
                        "--stuck", "0.1s", target.pid)
    now = time.monotonic()
    assert res.returncode == 0, res
    m = re.search(r"^  idle +3 tasks at sleepers\.py:%d in napper .*\), "
                  r"sleep in asyncio\.sleep, wake in ([0-9.]+)s \.\. "
                  r"([0-9.]+)s: " % marker_line(SCRIPT, "nap"),
                  res.stdout, re.M)
    assert m, res.stdout
    assert due["napper-0"] - now - 0.1 <= float(m.group(1)) <= \
        due["napper-0"] + SLACK - after, (m.group(0), due)
    assert due["napper-2"] - now - 0.1 <= float(m.group(2)) <= \
        due["napper-2"] + SLACK - after, (m.group(0), due)
    assert re.search(r"^  stuck .* in short_napper .*\), sleeps in "
                     r"asyncio\.sleep, overdue by [0-9.]+s$", res.stdout,
                     re.M), res.stdout
    # (up to 3.11 wait_for()'s own future, from 3.12 the Event's)
    assert re.search(r"^  stuck .* in waiting_for .*, waits on Future in "
                     r"\S+, times out in [0-9.]+s$", res.stdout, re.M), \
        res.stdout
    # the events: nothing said stuck of the sleepers; the overdue one's
    # says why
    assert not re.search(r"stuck .* in napper", res.stdout), res.stdout
    assert re.search(r"^\S+ stuck task .* in short_napper .*\), sleeps in "
                     r"asyncio\.sleep, overdue$", res.stdout, re.M), \
        res.stdout



WITH_UVLOOP = interpreters_importing(("3.11-debian",), "uvloop")


@pytest.mark.skipif(not WITH_UVLOOP, reason="uvloop is not installed for "
                    "Debian's python3.11 (python3-uvloop)")
def test_tasks_asleep_on_uvloop_say_when_they_wake(keeper):
    """uvloop keeps its timers in C, with no _scheduled list: a task
    asleep there is read from asyncio.sleep()'s handle, uvloop's
    TimerHandle, its _when in uvloop's time (libuv's monotonic clock).
    The dump and watch say when it wakes, as on asyncio's loop.  Before,
    "awaits Future", and watch called it stuck."""
    target = keeper.start_target(WITH_UVLOOP[0], "sleepers.py", "uvloop")
    due = target.ready["due"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    nappers = sorted((t for t in doc["tasks"] if outermost(t) == "napper"),
                     key=lambda t: t["awaiting"]["sleep_until"])
    assert len(nappers) == 3, doc["tasks"]
    for t, i in zip(nappers, range(3)):
        check_in(t["awaiting"], "sleep_until", "wakes_in_s",
                 due["napper-%d" % i], before, after)
    # wait_for() (3.11: the handle releasing its waiter, wait_for()'s
    # local) and asyncio.timeout() (the Timeout of the open async with)
    waiting, = [t for t in doc["tasks"] if outermost(t) == "waiting_for"]
    check_in(waiting["awaiting"], "timeout_at", "times_out_in_s",
             due["wait_for"], before, after)
    timed, = [t for t in doc["tasks"] if outermost(t) == "timed_napper"]
    check_in(timed["awaiting"], "sleep_until", "wakes_in_s",
             due["timed-sleep"], before, after)
    check_in(timed["awaiting"], "timeout_at", "times_out_in_s",
             due["timed-timeout"], before, after)
    res = run_coroscope("watch", "--for", "0.6s", "--interval", "0.2s",
                        "--stuck", "0.1s", target.pid)
    assert res.returncode == 0, res
    assert re.search(r"^  idle +3 tasks at sleepers\.py:%d in napper .*\), "
                     r"sleep in asyncio\.sleep, wake in [0-9.]+s \.\. "
                     r"[0-9.]+s: " % marker_line(SCRIPT, "nap"),
                     res.stdout, re.M), res.stdout


WITH_ANYIO = interpreters_importing(("3.11-debian",), "anyio, uvloop")


@pytest.mark.skipif(not WITH_ANYIO, reason="anyio and uvloop are not "
                    "installed for Debian's python3.11 (python3-anyio, "
                    "python3-uvloop)")
@pytest.mark.parametrize("loop", ("asyncio", "uvloop"))
def test_anyio_deadlines_end_the_waits(keeper, loop):
    """anyio's move_on_after() and fail_after() on its asyncio backend
    (its cancel scopes, read from the task's side: anyio's TaskState
    for it, out along the scopes' parents): a task waiting inside one
    says when its deadline ends the wait, the first to come of nested
    ones, none past a shielded scope, and a task group's children the
    deadline of the scope the group was opened in; on asyncio's loop and
    on uvloop's.  Before, none of them had a timeout."""
    target = keeper.start_target(WITH_ANYIO[0], "anyio_deadlines.py", loop)
    due = target.ready["due"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    tasks = dict((t["name"], t) for t in doc["tasks"])
    for name, want in (("waiter", "waiter"), ("nested", "nested"),
                       ("opener", "opener"), ("child-0", "opener"),
                       ("child-1", "opener")):
        check_in(tasks[name]["awaiting"], "timeout_at", "times_out_in_s",
                 due[want], before, after)
    for name in ("holder", "shielded"):
        assert "timeout_at" not in tasks[name]["awaiting"], tasks[name]
    text = run_coroscope("dump", target.pid).stdout
    assert re.search(r"\(T\) waiter 0x[0-9a-f]+ pending, waits for "
                     r"anyio\.Event \(not set, \d+ waiters\), times out "
                     r"in 59\d\.\ds$", text, re.M), text


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_watch_calls_a_task_asleep_on_a_loop_unread_idle(keeper, ident):
    """A loop whose timers coroscope cannot read (its _scheduled no list;
    a uvloop release laid out otherwise): a task parked in asyncio.sleep()
    there says "awaits Future" in the dump, but watch calls it idle all
    the same, "sleeps in asyncio.sleep" with no time (JSON: no due time),
    as run's causes leave asyncio.sleep out."""
    target = keeper.start_target(interpreter_or_skip(ident), "sleepers.py",
                                 "hidden")
    due = target.ready["due"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    nappers = [t for t in doc["tasks"] if outermost(t) == "napper"]
    assert len(nappers) == 3, doc["tasks"]
    assert all(set(t["awaiting"]) == {"id", "type"} for t in nappers), \
        nappers
    # a Timeout keeps its own due time: read off the open async with
    # (3.11+ asyncio.timeout(), 3.12+ wait_for() too)
    timed = [t for t in doc["tasks"] if outermost(t) == "timed_napper"]
    assert len(timed) == ("timed-timeout" in due), doc["tasks"]
    for t in timed:
        check_in(t["awaiting"], "timeout_at", "times_out_in_s",
                 due["timed-timeout"], before, after)
        assert "sleep_until" not in t["awaiting"], t
    waiting, = [t for t in doc["tasks"] if outermost(t) == "waiting_for"]
    if "timeout_at" in waiting["awaiting"]:
        check_in(waiting["awaiting"], "timeout_at", "times_out_in_s",
                 due["wait_for"], before, after)
    # (up to 3.11 wait_for() keeps a handle of asyncio's: not read here)
    assert ("timeout_at" in waiting["awaiting"]) == \
        (ident in ("3.12", "3.14")), \
        waiting
    res = run_coroscope("watch", "--json", "--for", "0.6s", "--interval",
                        "0.2s", "--stuck", "0.1s", target.pid)
    assert res.returncode == 0, res
    tasks = res.json()["tasks"]
    nappers = [t for t in tasks if t["where"]["function"] == "napper"]
    assert len(nappers) == 3, tasks
    for t in nappers:
        assert t["state"] == "idle" and t["waits_on"] is None, t
        assert t["sleep_until"] is None and t["wakes_in_s"] is None, t
    listener, = [t for t in tasks if t["where"]["function"] == "listener"]
    assert listener["state"] == "stuck", listener
    res = run_coroscope("watch", "--for", "0.6s", "--interval", "0.2s",
                        "--stuck", "0.1s", target.pid)
    assert res.returncode == 0, res
    assert re.search(r"^  idle +3 tasks at sleepers\.py:%d in napper .*\), "
                     r"sleep in asyncio\.sleep: " % marker_line(SCRIPT, "nap"),
                     res.stdout, re.M), res.stdout
