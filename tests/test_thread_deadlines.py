"""When a thread's sleep or timed wait ends of itself.

targets/timed_threads.py parks threads in time.sleep(600), a lock's
acquire(timeout=700), Event.wait(800), Queue.get(timeout=900), a
select() of a pipe for 1000 s, and an acquire() with no timeout.  Read
from the system call each is stopped in (clock_nanosleep() to an
absolute time from 3.11, select() of no descriptors before; futex waits
to an absolute time on CLOCK_REALTIME or CLOCK_MONOTONIC by version;
select()'s time left), the dump says when each ends: in seconds from the
stop, which the test brackets with its own clock around the read,
against time.monotonic() plus the seconds the target recorded just
before each call.  The text dump comes second: by then the first dump's
stop had the futex waits restarted through restart_syscall(), whose
registers are still the futex call's.  Before, nothing: a thread in a 600 s sleep looked as
stuck as one in an acquire() that never ends.  Every interpreter.
"""

import json
import re
import time

import pytest

from conftest import (interpreter_or_skip, marker_line, run_coroscope,
                      target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

# Between the target's record and its call: a few statements (and a
# lock's acquire() converts its timeout on the way).
SLACK = 0.5
# The document's seconds are rounded to the millisecond.
ROUND = 0.0006

SLEEPS = {"sleeper": True, "acquirer": False, "event": False,
          "getter": False, "selector": False}


def test_threads_say_when_their_waits_end(keeper, interp):
    target = keeper.start_target(interp, "timed_threads.py")
    tids, due = target.ready["tids"], target.ready["due"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    threads = dict((t["tid"], t) for t in doc["threads"])
    for name, sleep in SLEEPS.items():
        t = threads[tids[name]]
        key, other = (("wakes_in_s", "times_out_in_s") if sleep else
                      ("times_out_in_s", "wakes_in_s"))
        assert t[other] is None, (name, t)
        assert due[name] - after - ROUND <= t[key] <= \
            due[name] + SLACK - before + ROUND, (name, t, before, after)
    untimed = threads[tids["forever"]]
    assert untimed["wakes_in_s"] is None, untimed
    assert untimed["times_out_in_s"] is None, untimed

    text = run_coroscope("dump", target.pid).stdout
    for name, sleep in SLEEPS.items():
        m = re.search(r'^Thread %d "%s" .*\((sleeps, wakes|times out) in '
                      r'([0-9.]+)s\)$' % (tids[name], name), text, re.M)
        assert m, (name, text)
        assert m.group(1) == ("sleeps, wakes" if sleep else "times out"), \
            (name, m.group(0))
        assert float(m.group(2)) <= due[name] - before + SLACK, m.group(0)
    assert re.search(r'^Thread %d "forever"[^(\n]*(\(last ran [0-9.]+s '
                     r'ago\))?$' % tids["forever"], text, re.M), text
    # the Waits rows of the threads the graph sees waiting say it too
    for name in ("acquirer", "event", "getter"):
        row = re.search(r"^  thread %d \(%s\) at .*\(times out in "
                        r"([0-9.]+)s\)$" % (tids[name], name), text, re.M)
        assert row and float(row.group(1)) <= due[name] - before + SLACK, \
            (name, text)


def test_watch_says_when_threads_waits_end(keeper, interp):
    """watch's lines say it of a thread as of a task, from the last
    sample: ", sleeps in time.sleep, wakes in 598.0s", ", times out in
    698.0s".  The thread stays what its progress says (stuck here): a
    thread asleep in a test is no loop's periodic job."""
    target = keeper.start_target(interp, "timed_threads.py")
    tids, due = target.ready["tids"], target.ready["due"]
    res = run_coroscope("watch", "--for", "0.6s", "--interval", "0.2s",
                        "--stuck", "0.1s", target.pid)
    after = time.monotonic()
    assert res.returncode == 0, res
    for name, sleep in SLEEPS.items():
        m = re.search(r"^  stuck +[0-9.]+s\+ +thread %d '%s' at .*, %s "
                      r"in ([0-9.]+)s$"
                      % (tids[name], name,
                         r"sleeps in time\.sleep, wakes" if sleep else
                         "times out"), res.stdout, re.M)
        assert m, (name, res.stdout)
        # (from the last sample, before `after`)
        assert due[name] - after - 0.05 <= float(m.group(1)) <= \
            due[name] + SLACK - (after - 2.0), (name, m.group(0))
    assert re.search(r"^  stuck +[0-9.]+s\+ +thread %d 'forever' at "
                     r"\S+:\d+ in forever$" % tids["forever"], res.stdout,
                     re.M), res.stdout
    # the JSON summary's members, as a task's
    before = time.monotonic()
    doc = run_coroscope("watch", "--json", "--for", "0.4s", "--interval",
                        "0.2s", target.pid).json()
    after = time.monotonic()
    threads = dict((t["tid"], t) for t in doc["threads"])
    for name, sleep in SLEEPS.items():
        t = threads[tids[name]]
        at, left = (("sleep_until", "wakes_in_s") if sleep else
                    ("timeout_at", "times_out_in_s"))
        other = "timeout_at" if sleep else "sleep_until"
        assert t[other] is None, (name, t)
        assert due[name] - ROUND <= t[at] <= due[name] + SLACK, (name, t)
        assert t[at] - after - ROUND <= t[left] <= \
            t[at] - before + ROUND, (name, t)
    untimed = threads[tids["forever"]]
    assert untimed["sleep_until"] is None, untimed
    assert untimed["timeout_at"] is None, untimed


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_run_says_when_threads_waits_end(ident, work):  # noqa: F811
    """`run`'s causes say it of a thread as of a task: the lock cause of
    the thread in acquire(timeout=700), the graph's lines of the threads
    waiting on the Event and the Queue; and the list of what the samples
    saw stuck, of each.  (Each time is checked against its record by the
    dump's test above: here, that it is there and in its hundred.)"""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", py.path,
                         target_script("timed_threads.py"), str(ready)])
    assert res.returncode == 124, res
    tids = json.loads(ready.read_text())["tids"]
    causes = likely_causes(res.stderr)
    text = "\n".join(causes)
    # (the lock's cause, or the graph's line of its waiter)
    assert re.search(r"(thread %d \"acquirer\" is blocked acquiring a lock"
                     r"|thread %d \(acquirer\) at ).*, times out in "
                     r"69\d\.\ds" % (tids["acquirer"], tids["acquirer"]),
                     text), text
    for name, hundred in (("event", 7), ("getter", 8)):
        assert re.search(r"thread %d \(%s\) at .*, times out in %d9\d\.\ds"
                         % (tids[name], name, hundred), text), (name, text)
    seen = [ln for ln in res.stderr.splitlines() if "stuck for" in ln]
    for name, words in (("sleeper", r"sleeps in time\.sleep, wakes in 59"),
                        ("selector", "times out in 99")):
        assert any(re.search(r'thread %d "%s" stuck .*, %s\d\.\ds$'
                             % (tids[name], name, words), ln)
                   for ln in seen), (name, seen)


SPAN = r"time out in (\d+\.\d)s \.\. (\d+\.\d)s: "


@pytest.mark.parametrize("ident", ("3.12", "3.14t"))
def test_run_names_an_event_polled_in_vain(ident, work):  # noqa: F811
    """`while not ready.wait(timeout=0.4)` on an Event nobody sets: the
    Event is the cause, whether the samples saw the thread move (its
    wakes) or not; its timeout, when the dump read it, says it waits
    again.  Before, a thread seen moving at the last samples left "no
    likely cause" (two runs in five on 3.12)."""
    py = interpreter_or_skip(ident)
    script = target_script("poll_unset_event.py")
    res = coroscope_run(["--timeout", "5", "--", py.path, script])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    assert causes and re.match(
        r"^  process \d+: 1 waiting on threading\.Event 0x[0-9a-f]+ "
        r"\(not set(, 1 waiter)?\)$", causes[0]), res.stderr[:3000]
    detail = causes[1]
    assert "poll_unset_event.py:%d in wait_until_ready" % marker_line(
        script, "poll") in detail, causes
    if "times out in" in detail:
        assert re.search(r"times out in [0-9.]+s, then waits again "
                         r"\(seen \d+ times?\)", detail), detail


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_run_alike_threads_timeouts_span(ident, work):  # noqa: F811
    """Four threads in acquire(timeout=700..706) of one held Lock, four in
    wait(600..606) of one Event, each group from one line: run's causes
    show each group on one line, with their timeouts' span (before,
    none).  The timed acquire()s are the Lock's waiters, not a
    "possible deadlock" of four threads: the samples' stops leave each
    timed futex wait in restart_syscall(), which the graph now takes
    for the futex wait it is (before, only a first stop's was)."""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    script = target_script("alike_timed_threads.py")
    # (5 s: under the sanitizer pass's load, 3.6's nine threads were once
    # not all started at 3 s, and the ready file not yet written)
    res = coroscope_run(["--timeout", "5", "--", py.path, script,
                         str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    tids, due = info["tids"], info["due"]
    causes = likely_causes(res.stderr)
    text = "\n".join(causes)
    assert "possible deadlock" not in text, text
    for prefix, what, marker, function in (
            ("lk", "threading.Lock", "alike-acquire", "acquirer"),
            ("ev", "threading.Event", "alike-event", "waiter")):
        head = [i for i, c in enumerate(causes)
                if "4 waiting on %s " % what in c]
        assert len(head) == 1, text
        group = causes[head[0] + 1]
        assert group.startswith("      4 threads at alike_timed_threads"
                                ".py:%d in %s " % (marker_line(script, marker),
                                                   function)), text
        span = re.search(SPAN, group)
        assert span, group
        lo, hi = float(span.group(1)), float(span.group(2))
        names = ["%s-%d" % (prefix, i) for i in range(4)]
        # (as the dump's test: each from its record, to the read's time)
        spread = max(due[n] for n in names) - min(due[n] for n in names)
        assert abs((hi - lo) - spread) <= 0.2 + SLACK, (group, spread)
        base = 600 if prefix == "ev" else 700
        assert base - 60 < lo < base and base < hi + 6 < base + 66, group
        for n in names:
            assert "%d (%s)" % (tids[n], n) in group, (n, group)


def test_dump_alike_threads_timeouts_span(keeper, interp):
    """The text dump shows alike threads once; their header says their
    timeouts' span as a lone thread's line says its own: "(4 alike)
    (time out in 698.4s .. 704.4s)", each end bracketed by the target's
    records and the read (before, nothing).  The second dump reads the
    futex waits the first one's stop restarted."""
    target = keeper.start_target(interp, "alike_timed_threads.py")
    tids, due = target.ready["tids"], target.ready["due"]
    for attempt in range(2):
        before = time.monotonic()
        text = run_coroscope("dump", target.pid).stdout
        after = time.monotonic()
        for prefix in ("lk", "ev"):
            names = ["%s-%d" % (prefix, i) for i in range(4)]
            heads = [l for l in text.splitlines()
                     if l.startswith("Threads ") and
                     all('%d "%s"' % (tids[n], n) in l for n in names)]
            assert len(heads) == 1, (prefix, text)
            m = re.search(r"\(4 alike\) \(time out in ([0-9.]+)s \.\. "
                          r"([0-9.]+)s\)$", heads[0])
            assert m, heads[0]
            lo, hi = float(m.group(1)), float(m.group(2))
            first = min(due[n] for n in names)
            last = max(due[n] for n in names)
            assert first - after - 0.05 <= lo <= \
                first + SLACK - before + 0.05, (heads[0], before, after)
            assert last - after - 0.05 <= hi <= \
                last + SLACK - before + 0.05, (heads[0], before, after)
            # the Waits row of the group says the same span
            rows = [l for l in text.splitlines()
                    if l.startswith("  4 threads at alike_timed_threads.py:")
                    and '%d (%s)' % (tids[names[-1]], names[-1]) in l]
            assert len(rows) == 1 and m.group(0)[len("(4 alike) "):] + ": " \
                in rows[0], (rows, m.group(0))


# time.sleep() is select() of a time left up to 3.10, clock_nanosleep() to
# an absolute time from 3.11 (the stripped build's too)
@pytest.mark.parametrize("ident", ("3.6", "3.10", "3.11-debian", "3.14"))
def test_watch_a_heartbeat_thread_is_active(keeper, ident):
    """A thread that sleeps 1.5 s at one line, wakes, and sleeps again
    (targets/heartbeat.py) makes progress more often than the stuck
    threshold of 2 s: its sleep's end, read at each sample, is over by a
    later sample whose sleep ends later.  Before, its one wake in a
    window was lost among the stop's, and watch said "stuck thread ...
    'heartbeat' for 2.0s", then "moved after 3.2s stuck".  The thread
    asleep for an hour beside it stays stuck: a time left (select() up
    to 3.10) moves on by each stop, no wake."""
    target = keeper.start_target(interpreter_or_skip(ident), "heartbeat.py",
                                 "1.5")
    tids = target.ready["tids"]
    res = run_coroscope("watch", "--for", "4s", "--interval", "0.2s",
                        "--stuck", "2s", target.pid)
    assert res.returncode == 0, res
    assert not re.search(r"(stuck|moved) thread %d 'heartbeat'"
                         % tids["heartbeat"], res.stdout), res.stdout
    # The last sample may find it awake, or due within 0.1 s (no sleep
    # read then): the sleep's words are there only when it was read.
    assert re.search(r"^  active +thread %d 'heartbeat' at (?:\S*/)?heartbeat\.py"
                     r":%d in heartbeat(?:, sleeps in time\.sleep, wakes in |$)"
                     % (tids["heartbeat"], marker_line(
                         target_script("heartbeat.py"), "beat")),
                     res.stdout, re.M), res.stdout
    assert re.search(r"^  stuck +[0-9.]+s\+ +thread %d 'sleeper' at "
                     r"(?:\S*/)?heartbeat\.py:%d in sleeper, sleeps in "
                     r"time\.sleep, wakes in "
                     % (tids["sleeper"], marker_line(
                         target_script("heartbeat.py"), "asleep")),
                     res.stdout, re.M), res.stdout
