"""`coroscope watch PID`: what has made no progress, and for how long.

targets/watch_target.py runs, on an asyncio loop, a task parked on an Event
that is never set, a task looping on asyncio.sleep(0.05), a consumer of a
queue that another task feeds; and three threads: one blocked on a lock,
one sleeping in 50 ms steps, one spinning in pure Python; and an
executor's worker waiting for work.  Only the parked task and the blocked
thread may be reported stuck; the spinning thread is busy, the worker
idle.  The target must come out of every watch running and untraced.

targets/watch_gens_target.py has generators no task owns: one abandoned
after its first yield and a coroutine never awaited (stuck), and one a
thread iterates every 20 ms (not stuck); targets/watch_sched_target.py
the same for trio tasks and gevent greenlets.  With --native the blocked
thread's line says it is blocked in a lock.
"""

import json
import os
import pty
import re
import select
import signal
import subprocess
import termios
import time

import pytest

from conftest import (COROSCOPE, TIME_SCALE, assert_no_sanitizer_report,
                      coroscope_env, control_interpreter, interpreter,
                      interpreter_or_skip,
                      interpreters_importing, left_out, marker_line,
                      process_state, run_coroscope, target_script,
                      task_tracers, wait_until)
from vt_screen import Screen

SCRIPT = target_script("watch_target.py")
# The interpreters the issue names; absent ones are skipped, saying so.
WATCH_INTERPRETERS = ("3.8", "3.13", "3.11-debian", "3.14", "3.14t")
WATCH_ARGS = ["--for", "4s", "--interval", "0.5s", "--stuck", "2s"]
BUSY_SHARE = 0.05            # WATCH_BUSY_SHARE in cli/watch_track.h
BUSY_DEMAND = 0.5            # WATCH_BUSY_DEMAND


def watch_interp(ident):
    if left_out(ident):
        pytest.skip("interpreter %s left out by COROSCOPE_TEST_PYTHONS" % ident)
    found = interpreter(ident)
    if found is None:
        pytest.skip("interpreter %s is not installed here" % ident)
    return found


def assert_target_unharmed(target):
    assert target.proc.poll() is None, "the target died: %s" % target.stderr()
    assert process_state(target.pid) not in ("t", "T", None), \
        "target left stopped (state %s)" % process_state(target.pid)
    tracers = task_tracers(target.pid)
    assert tracers and not any(tracers.values()), \
        "target threads still traced: %r" % tracers


def by_name(items):
    return dict((item["name"], item) for item in items)


@pytest.fixture(scope="module", params=WATCH_INTERPRETERS)
def interp_id(request):
    """One of WATCH_INTERPRETERS.  (By this name, as the tests that take
    their interpreter by parameter do, conftest.py knows what each runs
    on: `make check`'s release pass leaves those on the sanitizer pass's
    interpreters to that pass.)"""
    return request.param


@pytest.fixture(scope="module")
def watched(interp_id, module_keeper):
    """(target, the --json summary of one 4 s watch) per interpreter."""
    interp = watch_interp(interp_id)
    target = module_keeper.start_target(interp, "watch_target.py")
    result = run_coroscope("watch", "--json", *(WATCH_ARGS + [target.pid]))
    yield target, result
    # Its spinning thread takes most of a CPU for as long as it lives:
    # kept to the module's end, one per interpreter, three of them at
    # once took a worker's half of the machine through the suite's
    # start (the module's other tests run the spin on targets of their
    # own).
    target.proc.kill()
    target.proc.wait()


def test_json_summary_document(watched):
    target, result = watched
    doc = result.json()
    assert doc["schema"] == 1
    assert doc["pid"] == target.pid
    assert doc["interval_s"] == 0.5
    assert doc["stuck_threshold_s"] == 2.0
    assert doc["target_exited"] is False
    # --for 4s ends with a sample at 4 s, whatever the pace
    assert 4.0 <= doc["duration_s"] < 4.0 + 10 * TIME_SCALE, doc
    # the first at 0 s and the last at 4 s, at least (one sample takes
    # seconds on a crowded machine with the sanitizer build)
    assert doc["samples"] >= 2, doc
    for item in doc["tasks"]:
        assert item["state"] in ("stuck", "active", "gone"), item
    for item in doc["tasks"] + doc["threads"]:
        assert item["state"] in ("stuck", "busy", "active", "gone",
                                 "idle"), item
        assert item["stuck_for"] >= 0, item
    for item in doc["threads"]:
        assert 0 <= item["busy"] <= 1, item
        assert (item["idle"] is None) == (item["state"] != "idle"), item
    for item in doc["tasks"]:
        assert item["framework"] == "asyncio", item
    # the tasks' coroutines are theirs: no generator here is its own
    assert isinstance(doc["generators"], list), doc
    assert doc["greenlets"] == [], doc


def test_parked_task_and_blocked_thread_are_stuck(watched):
    target, result = watched
    doc = result.json()
    tasks, threads = by_name(doc["tasks"]), by_name(doc["threads"])

    parked = tasks["parked"]
    assert parked["state"] == "stuck", parked
    assert parked["stuck_for"] >= 3.0, parked
    # parked since before the watch: its time is a floor
    assert parked["at_least"] is True, parked
    assert parked["where"]["file"].endswith("watch_target.py"), parked
    assert parked["where"]["line"] == marker_line(SCRIPT, "event-wait")
    assert parked["where"]["function"] == "parked", parked
    # the innermost frame is asyncio's Event.wait, what it awaits a future
    assert parked["innermost"]["function"].endswith("wait"), parked
    assert parked["waits_on"] and "Future" in parked["waits_on"], parked

    locked = threads["locked"]
    assert locked["tid"] == target.ready["tids"]["locked"], locked
    assert locked["state"] == "stuck", locked
    assert locked["stuck_for"] >= 3.0, locked
    assert locked["at_least"] is True, locked
    assert locked["where"]["line"] == marker_line(SCRIPT, "lock-acquire")
    assert locked["busy"] < BUSY_SHARE, locked


def test_nothing_else_is_stuck(watched):
    target, result = watched
    doc = result.json()
    tasks, threads = by_name(doc["tasks"]), by_name(doc["threads"])

    for name in ("napper", "consumer", "feeder"):
        assert tasks[name]["state"] == "active", tasks[name]
        assert tasks[name]["stuck_for"] < 2.0, tasks[name]
        assert tasks[name]["at_least"] is False, tasks[name]
    for name in ("napping", "spinning"):
        assert threads[name]["state"] != "stuck", threads[name]
        assert threads[name]["stuck_for"] < 2.0, threads[name]
    assert threads["napping"]["tid"] == target.ready["tids"]["napping"]
    # the event loop's thread wakes every few milliseconds
    assert threads["MainThread"]["state"] != "stuck", threads["MainThread"]


def test_spinning_thread_is_busy(watched):
    target, result = watched
    spinning = by_name(result.json()["threads"])["spinning"]
    assert spinning["tid"] == target.ready["tids"]["spinning"]
    assert spinning["state"] == "busy", spinning
    # on a crowded machine it may get little CPU, but always wants one
    assert (spinning["busy"] >= BUSY_SHARE or
            spinning["demand"] >= BUSY_DEMAND), spinning
    assert spinning["where"]["line"] == marker_line(SCRIPT, "spin")


def watch_failing(target, what, more=()):
    """A --json watch (with the options more) of target whose reading
    fails as COROSCOPE_TEST_WALK_FAIL=what asks: (the process, its
    summary)."""
    env = coroscope_env({"COROSCOPE_TEST_WALK_FAIL": what})
    res = subprocess.run([COROSCOPE, "watch", "--json"] + list(more) +
                         WATCH_ARGS + [str(target.pid)],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env,
                         timeout=120 * TIME_SCALE)
    assert res.returncode == 0, res
    return res, json.loads(res.stdout)


def test_a_sample_whose_heap_walk_failed_is_no_sample(keeper):
    """A sample that read the threads but not the heap (its walk met the
    lists mid-change) does not make every task "gone": it counts as a
    failed sample.  (Once, in the sanitizer run under load, the summary
    called every task gone at the last sample, as such a sample did.)"""
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    res, doc = watch_failing(target, "4")
    assert doc["samples_failed"] == 1, doc
    assert "COROSCOPE_TEST_WALK_FAIL" in doc["last_error"], doc
    tasks = by_name(doc["tasks"])
    assert not [t for t in doc["tasks"] if t["state"] == "gone"], tasks
    assert tasks["parked"]["state"] == "stuck", tasks["parked"]
    assert "gone" not in res.stderr.decode(), res.stderr


def test_no_block_sample_whose_heap_walk_failed_is_read_again(keeper):
    """With --no-block, a sample whose heap walk met the running target
    mid-change walks the heap again at once, as a dump does: no sample is
    lost to it."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    res, doc = watch_failing(target, "4", ["--no-block"])
    assert doc["samples"] >= 4, doc  # (the 4th walk happened)
    # (a real race may still fail a sample, after its tries)
    assert "COROSCOPE_TEST_WALK_FAIL" not in (doc["last_error"] or ""), doc
    assert by_name(doc["tasks"])["parked"]["state"] == "stuck", doc


def test_waiting_worker_is_idle(watched):
    """An executor's worker back in its loop makes no progress for the
    whole watch, like the blocked thread, but is idle, not stuck."""
    target, result = watched
    pooled = by_name(result.json()["threads"])["pooled_0"]
    assert pooled["tid"] == target.ready["tids"]["pooled"], pooled
    assert pooled["state"] == "idle", pooled
    assert pooled["idle"] == "an executor's worker thread", pooled
    assert pooled["stuck_for"] >= 3.0, pooled
    assert pooled["where"]["function"] == "_worker", pooled
    assert pooled["where"]["file"].endswith("concurrent/futures/thread.py")


IDLE_ARGS = ["--for", "2.5s", "--interval", "0.5s", "--stuck", "1s"]


@pytest.mark.parametrize("interp_id", WATCH_INTERPRETERS)
def test_worker_in_a_job_of_c_is_not_idle(keeper, interp_id):
    """Of a pool's two workers, the one waiting for work is idle; the one
    whose job is time.sleep() itself (no frame of the program's inside
    the worker's loop, only the pool's code calling into C) is stuck,
    not idle.  gevent's ThreadPool likewise, where gevent is."""
    interp = watch_interp(interp_id)
    pools = ["executor"]
    args = []
    if interp_id == "3.11-debian" and interpreters_with("gevent"):
        pools.append("gevent")
        args = ["gevent"]
    target = keeper.start_target(interp, "idle_workers.py", *args)
    result = run_coroscope("watch", "--json",
                           *(IDLE_ARGS + [target.pid]))
    assert result.returncode == 0, result
    threads = dict((t["tid"], t) for t in result.json()["threads"])
    what = {"executor": "an executor's worker thread",
            "gevent": "a gevent threadpool's worker thread"}
    for pool in pools:
        two = [threads[tid] for tid in target.ready[pool]]
        states = sorted((t["state"], t["idle"]) for t in two)
        assert states == [("idle", what[pool]), ("stuck", None)], \
            (pool, two)
    assert_target_unharmed(target)


def runs_of(pid, tid):
    """Times the kernel has put thread tid on a CPU (schedstat)."""
    with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
        return int(f.read().split()[2])


def test_target_unharmed_after_watch(watched):
    target, result = watched
    assert result.returncode == 0, result
    assert_target_unharmed(target)
    # and it still runs: the thread napping in 50 ms steps keeps waking
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("no schedstat in this kernel to count wake-ups")
    tid = target.ready["tids"]["napping"]
    before = runs_of(target.pid, tid)
    assert wait_until(lambda: runs_of(target.pid, tid) >= before + 3,
                      timeout=5 * TIME_SCALE), \
        "the napping thread stopped waking after the watch"


def test_plain_lines_say_what_is_stuck(keeper):
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    result = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    event_wait = "watch_target.py:%d" % marker_line(SCRIPT, "event-wait")
    lock = "watch_target.py:%d" % marker_line(SCRIPT, "lock-acquire")
    stuck = [l for l in lines if " stuck " in l and " for " in l]
    assert any("task 'parked'" in l and event_wait in l for l in stuck), \
        result
    assert any("thread %d 'locked'" % target.ready["tids"]["locked"] in l
               and lock in l for l in stuck), result
    for name in ("'napper'", "'consumer'", "'feeder'", "'napping'",
                 "'spinning'", "'pooled_0'"):
        wrong = [l for l in stuck if name in l]
        assert not wrong, (wrong, result)
    summary = lines.index(next(l for l in lines
                               if l.startswith("watch summary:")))
    assert "tasks:" in lines[summary:] and "threads:" in lines[summary:]
    assert any(l.strip().startswith("busy ") and "'spinning'" in l
               for l in lines[summary:]), result
    idle = [l for l in lines[summary:] if "'pooled_0'" in l]
    assert len(idle) == 1 and idle[0].split()[0] == "idle", result
    assert idle[0].endswith(" in _worker, an executor's worker thread"), \
        idle
    assert_target_unharmed(target)


def test_a_watch_shorter_than_stuck_says_what_stood_still(keeper):
    """--for 2s with the default --stuck 10s: nothing can be stuck, and
    what never moved was called "active" as if it had (a helper's user
    round); the summary says the watch was too short to call anything
    stuck and calls what stood still through it "still"."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    result = run_coroscope("watch", "--for", "2s", "--interval", "0.4s",
                           target.pid)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    summary = lines.index(next(l for l in lines
                               if l.startswith("watch summary:")))
    rest = lines[summary:]
    assert rest[1] == ("the watch was shorter than --stuck (10s): nothing "
                       "could be called stuck; \"still\" is what did not "
                       "move in it"), result
    event_wait = "watch_target.py:%d" % marker_line(SCRIPT, "event-wait")
    parked = [l.split() for l in rest if "task 'parked'" in l]
    assert len(parked) == 1 and parked[0][0] == "still", result
    # parked since before the watch: its time, a floor, ends in "+",
    # and the line under the first says what that means
    assert parked[0][1].endswith("s+"), result
    assert 1.5 <= float(parked[0][1][:-2]) < 10, result
    assert rest[2] == ("a time with \"+\" is a floor: that one sat there "
                       "unmoved when the watch began, maybe for longer"), \
        result
    assert any(event_wait in l for l in rest if "task 'parked'" in l)
    napper = [l.split()[0] for l in rest if "'napper'" in l]
    assert napper and set(napper) == {"active"}, result
    assert not [l for l in rest if l.strip().startswith("stuck ")], result
    assert_target_unharmed(target)


ALIKE_POOL = 12


# --all on one interpreter: it changes only how lines are grouped.
ALIKE_WATCHES = ([(i, None) for i in WATCH_INTERPRETERS] +
                 [(WATCH_INTERPRETERS[0], "--all")])


@pytest.mark.parametrize("interp_id,option", ALIKE_WATCHES,
                         ids=["%s-%s" % w for w in ALIKE_WATCHES])
def test_alike_threads_one_line(keeper, interp_id, option):
    """alike_threads.py's pool of 12 threads parked on one line: one
    "stuck" event and one summary line for all of them, counted and the
    first five named (escaped); the pair and the main thread a line each;
    with --all, a line each."""
    interp = watch_interp(interp_id)
    script = target_script("alike_threads.py")
    target = keeper.start_target(interp, "alike_threads.py",
                                 str(ALIKE_POOL))
    pool_line = marker_line(script, "pool-wait")

    def pool_parked():
        # each worker announces itself just before its parking line: all
        # must be there before the first sample, or they are stuck from
        # different samples on
        doc = run_coroscope("dump", "--json", target.pid).json()
        at = [[f["line"] for f in th["frames"] if f["file"] == script]
              for th in doc["threads"]
              if th["name"] and th["name"].startswith("pool-")]
        return len(at) == ALIKE_POOL and all(
            own and own[0] == pool_line for own in at)

    assert wait_until(pool_parked, 20 * TIME_SCALE), "the pool never parked"
    result = run_coroscope("watch", *(([option] if option else []) +
                                      WATCH_ARGS + [target.pid]))
    assert result.returncode == 0, result
    assert "\x1b" not in result.stdout, result
    pool = dict((tid, name) for name, tid in target.ready["threads"].items()
                if name.startswith("pool-"))
    lines = result.stdout.splitlines()
    summary = lines.index(next(l for l in lines
                               if l.startswith("watch summary:")))
    place = "alike_threads.py:%d in pool_worker" % pool_line
    events = [l for l in lines[:summary] if " stuck " in l and place in l]
    rows = [l for l in lines[summary:] if place in l]
    for tid in (t for n, t in target.ready["threads"].items()
                if n.startswith("pair-")):
        assert len([l for l in lines[summary:]
                    if "thread %d '" % tid in l]) == 1, result
    if option:
        assert len(events) == ALIKE_POOL and len(rows) == ALIKE_POOL, \
            result
        assert sorted(int(l.split(" thread ")[1].split()[0])
                      for l in rows) == sorted(pool), rows
        return
    assert len(events) == 1 and len(rows) == 1, result
    member = re.compile(r"^(\d+) '((?:[^'\\]|\\.)*)'$")
    # parked before the watch's first sample: "at least", "+"
    for line, lead in ((events[0], r"\d\d:\d\d:\d\d stuck 12 threads for "
                                   r"at least \d"),
                       (rows[0], r"  stuck \d+\.\ds\+ +12 threads at ")):
        assert re.match(lead, line), line
        named, more = line.rsplit(": ", 1)[1].rsplit(" and ", 1)
        assert more == "%d more" % (ALIKE_POOL - 5), line
        got = [member.match(x) for x in named.split(", ")]
        assert len(got) == 5 and all(got), line
        for m in got:
            assert m.group(2) == pool[int(m.group(1))].replace(
                "\n", "\\n").replace("\x1b", "\\x1b"), line
    assert_target_unharmed(target)


def test_alike_generators_one_line(keeper):
    """alike_cms.py's 6 context-manager generators suspended alike, one
    in each parked thread: one "stuck" event and one summary line, by
    address; the 2 of kept() a line each."""
    interp = control_interpreter()
    script = target_script("alike_cms.py")
    target = keeper.start_target(interp, "alike_cms.py", "6")
    result = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    assert result.returncode == 0, result
    gens = target.ready["generators"]
    lines = result.stdout.splitlines()
    summary = lines.index(next(l for l in lines
                               if l.startswith("watch summary:")))
    place = "alike_cms.py:%d in held" % marker_line(script, "held-yield")
    events = [l for l in lines[:summary] if " stuck " in l and place in l]
    rows = [l for l in lines[summary:] if place in l]
    assert len(events) == 1 and len(rows) == 1, result
    for line, lead in ((events[0], r"\d\d:\d\d:\d\d stuck 6 generators "
                                   r"'held' for at least [0-9.]+s at "),
                       (rows[0], r"  stuck \d+\.\ds\+ +6 generators 'held' "
                                 r"at ")):
        assert re.match(lead + re.escape(place) + ": ", line), line
        named, more = line.rsplit(": ", 1)[1].rsplit(" and ", 1)
        assert more == "1 more", line
        named = named.split(", ")
        assert len(named) == 5 and set(named) <= set(gens["held"]), line
    kept = "alike_cms.py:%d in kept" % marker_line(script, "kept-yield")
    assert sorted(re.search(r"generator 'kept' \((0x[0-9a-f]+)\)", l).group(1)
                  for l in lines[summary:] if kept in l) == \
        sorted(gens["kept"]), result
    assert_target_unharmed(target)


@pytest.mark.parametrize("interp_id", WATCH_INTERPRETERS)
def test_target_exiting_ends_with_summary(keeper, interp_id):
    interp = watch_interp(interp_id)
    target = keeper.start_target(interp, "watch_target.py",
                                 "--exit-after", "5")
    result = run_coroscope("watch", "--json", "--interval", "0.3s",
                           "--stuck", "1s", target.pid, timeout=30)
    assert result.returncode == 0, result
    doc = result.json()
    assert doc["target_exited"] is True, (doc, result.stderr)
    assert doc["samples"] >= 1, doc
    # what each was doing when it was last seen
    assert by_name(doc["tasks"])["parked"]["state"] in ("stuck", "active"), doc
    assert doc["duration_s"] < 20 * TIME_SCALE, doc
    assert target.proc.wait(timeout=10) == 0
    text = run_coroscope("watch", "--interval", "0.3s", target.pid)
    assert text.returncode == 3, "watching a process that is gone: %r" % text


def test_sigint_ends_with_summary(keeper):
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    proc = keeper.spawn_coroscope(["watch", "--json", "--interval", "0.2s",
                                   "--stuck", "1s", str(target.pid)])
    time.sleep(3.0 * TIME_SCALE)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30 * TIME_SCALE)
    assert_no_sanitizer_report(err)
    assert proc.returncode == 0, (out, err)
    doc = json.loads(out)
    assert doc["samples"] >= 1, doc
    assert doc["target_exited"] is False, doc
    parked = by_name(doc["tasks"])["parked"]
    # stuck since it was first seen, up to the last sample
    if doc["samples"] >= 2:
        assert parked["stuck_for"] > 0, parked
    assert abs(parked["stuck_for"] -
               (parked["last_seen_s"] - parked["first_seen_s"])) < 0.01, parked
    assert_target_unharmed(target)


def test_usage_errors():
    for args in (["--interval", "0s", "1"], ["--for", "x", "1"],
                 ["--stuck"], [], ["1", "2"], ["--native-frames", "1"]):
        result = run_coroscope("watch", *args)
        assert result.returncode == 2, result
        assert result.stderr.startswith("coroscope: "), result


def live_view(keeper, target, seconds, columns=120, lang=None,
              drawn=b"stuck after 1s"):
    """Run watch on a pseudo-terminal `columns` wide for `seconds` (in
    the locale lang: LC_ALL), want `drawn` in what it drew, quit with q;
    return (all it wrote, decoded; the terminal's local modes before and
    after)."""
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    extra = {"TERM": "xterm", "COLUMNS": str(columns), "LINES": "30"}
    if lang:
        extra["LC_ALL"] = lang
    env = coroscope_env(extra)
    proc = subprocess.Popen([COROSCOPE, "watch", "--interval", "0.3s",
                             "--stuck", "1s", str(target.pid)],
                            stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                            env=env, start_new_session=True)
    keeper.tools.append(proc)
    output = b""

    def read_some(seconds):
        data = b""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data += os.read(master, 65536)
                except OSError:
                    break
        return data

    output += read_some(seconds * TIME_SCALE)
    # (a crowded host may take seconds more for the first sample: once
    # the full suite drew nothing in the first 2.5 s)
    deadline = time.monotonic() + 10 * TIME_SCALE
    while drawn not in output and time.monotonic() < deadline:
        output += read_some(0.2)
    assert drawn in output, output[-2000:]
    os.write(master, b"q")
    deadline = time.monotonic() + 20 * TIME_SCALE
    while proc.poll() is None and time.monotonic() < deadline:
        output += read_some(0.2)
    assert proc.poll() == 0, (proc.poll(), output[-2000:])
    output += read_some(0.3)
    err = proc.stderr.read().decode("utf-8", "replace")
    assert_no_sanitizer_report(err)
    after = termios.tcgetattr(slave)
    os.close(master)
    os.close(slave)
    return output.decode("utf-8", "replace"), before[3], after[3]


def test_live_view_on_a_terminal(keeper):
    """The curses view draws on a pseudo-terminal, quits on q, and leaves
    the terminal as it found it, with the summary after the view."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    text, before, after = live_view(keeper, target, 2.5)
    assert "\x1b[?1049h" in text, "no alternate screen: %r" % text[:300]
    summary = text.rindex("watch summary:")
    assert "\x1b[?1049l" in text[:summary], "the view was not closed first"
    assert "\x1b" not in text[summary:], \
        "escape sequences after the summary: %r" % text[summary:]
    assert "'parked'" in text[summary:]
    assert after == before, "terminal local modes not restored"
    assert_target_unharmed(target)


def test_live_view_shows_generators(keeper):
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_gens_target.py")
    text, before, after = live_view(keeper, target, 3.0)
    view = text[:text.rindex("watch summary:")]
    # the view's rows: "stuck 1.2s   generator 'abandoned' (0x...) ..."
    addr = target.ready["generators"]["abandoned"]
    assert "generator 'abandoned' (%s)" % addr in view, view[-2000:]
    assert "generator 'counting'" in view, view[-2000:]
    assert after == before, "terminal local modes not restored"
    assert_target_unharmed(target)


def test_live_view_keeps_long_events_whole(keeper):
    """A grouped event line longer than 256 bytes reaches a wide enough
    screen whole: the view kept 256 bytes of each logged line, cut in
    the middle of a name, and its group's "and 7 more" never showed."""
    interp = control_interpreter()
    # (names 40 bytes longer: the line is over 256 bytes whatever the TIDs)
    target = keeper.start_target(interp, "alike_threads.py", str(ALIKE_POOL),
                                 "0123456789" * 4)
    text, before, after = live_view(keeper, target, 3.0, columns=600)
    view = text[:text.rindex("watch summary:")]
    event = re.search(r"\d\d:\d\d:\d\d stuck %d threads for .*?and %d "
                      r"more" % (ALIKE_POOL, ALIKE_POOL - 5), view)
    assert event, view[-3000:]
    # (drawn in one piece on a blank row: no cursor motion inside)
    assert "\x1b[" not in event.group(0).replace("\\x1b[", ""), event
    assert len(event.group(0).encode()) > 256, event.group(0)
    assert after == before, "terminal local modes not restored"
    assert_target_unharmed(target)


# (a CJK character's UTF-8 holds bytes 0x80-0x9f, which curses, when not
# told the locale, drew as "~B")
WIDE_TAG = "-\u30bf\u30b9\u30af-\u00fc"


@pytest.mark.parametrize("lang", ["C.UTF-8", "C"])
def test_live_view_draws_names_as_the_locale_can(keeper, lang):
    """Thread names with CJK characters: in a UTF-8 locale the view
    shows them as they are (their widths: tests/unit/test_term_cut.c); in
    the C locale as escapes of their bytes; never as curses' pieces of
    bytes."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "alike_threads.py", str(ALIKE_POOL),
                                 WIDE_TAG)
    text, before, after = live_view(keeper, target, 3.0, columns=600,
                                    lang=lang)
    view = text[:text.rindex("watch summary:")]
    if lang == "C":
        # every byte outside ASCII as \xNN, and nothing else outside it
        shown = "".join("\\x%02x" % b if b > 0x7f else chr(b)
                        for b in WIDE_TAG.encode())
        assert "pool-0" + shown in view, view[-3000:]
        assert not re.search("[^\x00-\x7f]", view), view[-3000:]
    else:
        assert "pool-0" + WIDE_TAG in view, view[-3000:]
    assert "~B" not in view, view[-3000:]
    assert after == before, "terminal local modes not restored"
    assert_target_unharmed(target)


def test_live_view_cuts_rows_at_the_screen_width(keeper):
    """On a screen 60 columns wide, rows of CJK names (two columns a
    character) end at its edge: no row wider, the pool's rows, longer
    than that, cut at 59 or 60 columns (not at 60 bytes, some 56
    columns), no character cut in two.  The screen as the terminal
    shows it is replayed by tests/vt_screen.py."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "alike_threads.py", str(ALIKE_POOL),
                                 WIDE_TAG)
    # (the heading's end, "stuck after 1s", is past the edge: a row
    # drawn stuck says the view has been drawing samples)
    text, before, after = live_view(keeper, target, 3.0, columns=60,
                                    lang="C.UTF-8", drawn=b"stuck 1.")
    screen = Screen(60, 30)
    screen.feed(text[:text.rindex("\x1b[?1049l")])
    rows = [screen.row(y) for y in range(screen.rows)]
    pool = [y for y in range(screen.rows)
            if "pool-" in rows[y] and " thread " in rows[y]]
    assert len(pool) == ALIKE_POOL, "\n".join(rows)
    for y in pool:
        assert 59 <= screen.row_width(y) <= 60, (y, rows[y])
        assert WIDE_TAG in rows[y], rows[y]
    assert all(screen.row_width(y) <= 60 for y in range(screen.rows))
    assert "\ufffd" not in text and "~B" not in text, "\n".join(rows)
    assert after == before, "terminal local modes not restored"
    assert_target_unharmed(target)


def test_no_block_never_stops_the_target(keeper):
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_target.py")
    proc = keeper.spawn_coroscope(["watch", "--json", "--no-block",
                                   "--for", "3s", "--interval", "0.2s",
                                   "--stuck", "1s", str(target.pid)])
    traced = []
    while proc.poll() is None:
        traced += [tid for tid, tracer in task_tracers(target.pid).items()
                   if tracer]
        time.sleep(0.005)
    out, err = proc.communicate(timeout=10)
    assert_no_sanitizer_report(err)
    assert proc.returncode == 0, (out, err)
    assert not traced, "threads traced during a --no-block watch: %r" % traced
    doc = json.loads(out)
    assert doc["samples"] >= 2, doc
    assert by_name(doc["threads"])["locked"]["state"] == "stuck", doc
    assert_target_unharmed(target)


# ---- generators no task owns (targets/watch_gens_target.py) ----

GENS_SCRIPT = target_script("watch_gens_target.py")


def by_address(items):
    return dict((item["address"], item) for item in items)


@pytest.fixture(scope="module")
def watched_gens(interp_id, module_keeper):
    """(target, the --json summary of one 4 s watch) per interpreter."""
    interp = watch_interp(interp_id)
    target = module_keeper.start_target(interp, "watch_gens_target.py")
    result = run_coroscope("watch", "--json", *(WATCH_ARGS + [target.pid]))
    return target, result


def test_abandoned_generator_is_stuck(watched_gens):
    target, result = watched_gens
    assert result.returncode == 0, result
    gens = by_address(result.json()["generators"])
    addrs = target.ready["generators"]

    parked = gens[addrs["abandoned"]]
    assert parked["name"] == "abandoned", parked
    assert parked["kind"] == "generator", parked
    assert parked["state"] == "stuck", parked
    assert parked["stuck_for"] >= 3.0, parked
    assert parked["where"]["file"].endswith("watch_gens_target.py"), parked
    assert parked["where"]["line"] == marker_line(GENS_SCRIPT,
                                                  "gen-abandoned"), parked

    unstarted = gens[addrs["unstarted"]]
    assert unstarted["kind"] == "coroutine", unstarted
    assert unstarted["state"] == "stuck", unstarted
    assert unstarted["stuck_for"] >= 3.0, unstarted
    assert_target_unharmed(target)


def test_iterated_generator_is_not_stuck(watched_gens):
    target, result = watched_gens
    doc = result.json()
    steady = by_address(doc["generators"])[target.ready["generators"]
                                           ["counting"]]
    assert steady["name"] == "counting", steady
    assert steady["state"] == "active", steady
    assert steady["stuck_for"] < 2.0, steady
    assert steady["where"]["line"] == marker_line(GENS_SCRIPT,
                                                  "gen-counting"), steady
    # followed across the whole watch by its address, from the first
    # sample (taken at once, but reading /proc takes time under load)
    assert steady["first_seen_s"] < doc["interval_s"], steady
    assert steady["last_seen_s"] >= 4.0, steady
    # (whether the thread sleeping between items is stuck is the
    # threads' question: test_nothing_else_is_stuck's 'napping')
    iterating = by_name(doc["threads"])["iterating"]
    assert iterating["tid"] == target.ready["tids"]["iterating"], iterating


def test_generator_lines(keeper):
    interp = control_interpreter()
    target = keeper.start_target(interp, "watch_gens_target.py")
    result = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    addrs = target.ready["generators"]
    stuck = [l for l in lines if " stuck " in l and " for " in l]
    where = "watch_gens_target.py:%d in abandoned" % marker_line(
        GENS_SCRIPT, "gen-abandoned")
    assert any("generator 'abandoned' (%s)" % addrs["abandoned"] in l and
               where in l for l in stuck), result
    assert any("coroutine 'unstarted' (%s)" % addrs["unstarted"] in l
               for l in stuck), result
    assert not [l for l in stuck if "'counting'" in l], result
    summary = lines.index(next(l for l in lines
                               if l.startswith("watch summary:")))
    rest = lines[summary:]
    assert "generators:" in rest, result
    assert any(l.strip().startswith("active ") and
               "generator 'counting'" in l for l in rest), result
    assert_target_unharmed(target)


def test_a_waits_holder_is_named(keeper, interp_id):
    """Tasks waiting for an asyncio.Lock: watch says what they wait on,
    the lock, not the future its acquire() awaits, and who holds it, as
    dump does (a helper's user round: "waits on Future in Lock.acquire",
    and the holder only "idle")."""
    interp = watch_interp(interp_id)
    target = keeper.start_target(interp, "watch_locks.py")
    res = run_coroscope("watch", "--json", "--for", "2s", "--interval",
                        "0.5s", "--stuck", "1s", target.pid)
    assert res.returncode == 0, res
    tasks = dict((t["address"], t) for t in res.json()["tasks"])
    holder = tasks[target.ready["tasks"]["holder"]]
    assert holder["held_by"] is None, holder
    for address in target.ready["tasks"]["waiters"]:
        t = tasks[address]
        assert t["state"] == "stuck", t
        assert t["where"]["line"] == marker_line(
            target_script("watch_locks.py"), "lock-waiter"), t
        assert (t["waits_on"], t["held_by"]) == (
            "asyncio.Lock", "task '%s'" % holder["name"]), (t, holder)
    text = run_coroscope("watch", "--for", "1s", "--interval", "0.5s",
                         "--stuck", "0.5s", target.pid)
    assert text.stdout.count(", waits on asyncio.Lock held by task '%s'"
                             % holder["name"]) >= 2, text.stdout
    assert_target_unharmed(target)


def test_a_greenlets_wait_names_its_holder(keeper):
    """A greenlet holds a gevent Semaphore and blocks its thread in the
    unpatched time.sleep(): the waiters' holder is that thread, running
    that greenlet."""
    interp = watch_interp("3.11-debian")
    found = interpreters_importing(("3.11-debian",), "gevent")
    if not found:
        pytest.skip("Debian's python3.11 has no gevent here (make deps)")
    target = keeper.start_target(interp, "gevent_hub_blocked.py")
    res = run_coroscope("watch", "--json", "--for", "1s", "--interval",
                        "0.5s", "--stuck", "0.5s", target.pid)
    assert res.returncode == 0, res
    waiters = [g for g in res.json()["greenlets"]
               if g["where"] and g["where"]["function"] == "waiter"]
    assert len(waiters) == 2, res.json()["greenlets"]
    for g in waiters:
        assert g["waits_on"] == "gevent.lock.Semaphore", g
        assert re.match(r"thread \d+ running greenlet 'blocker'$",
                        g["held_by"]), g
    assert_target_unharmed(target)


# ---- trio tasks and gevent greenlets (targets/watch_sched_target.py) ----

SCHED_SCRIPT = target_script("watch_sched_target.py")
# Where the frameworks are installed: Debian's packages, pyenv's trio.
SCHED_INTERPRETERS = ("3.11-debian", "3.11")


def interpreters_with(module):
    return interpreters_importing(SCHED_INTERPRETERS, module)


@pytest.mark.parametrize("framework,listed", [("trio", "tasks"),
                                              ("gevent", "greenlets")])
def test_sched_parked_stuck_napper_not(keeper, framework, listed):
    found = interpreters_with(framework)
    if not found:
        pytest.skip("no interpreter here has %s (%s), or "
                    "COROSCOPE_TEST_PYTHONS left them out"
                    % (framework, ", ".join(SCHED_INTERPRETERS)))
    for interp in found:
        target = keeper.start_target(interp, "watch_sched_target.py",
                                     framework)
        result = run_coroscope("watch", "--json",
                               *(WATCH_ARGS + [target.pid]))
        assert result.returncode == 0, result
        doc = result.json()
        items = by_name(doc[listed])
        parked, napper = items["parked"], items["napper"]
        assert parked["state"] == "stuck", (interp, parked)
        assert parked["stuck_for"] >= 3.0, (interp, parked)
        assert parked["where"]["line"] == marker_line(
            SCHED_SCRIPT, framework + "-parked"), (interp, parked)
        assert napper["state"] == "active", (interp, napper)
        assert napper["stuck_for"] < 2.0, (interp, napper)
        assert napper["where"]["line"] == marker_line(
            SCHED_SCRIPT, framework + "-nap"), (interp, napper)
        # asleep for an hour: idle, as a task in asyncio.sleep() (a
        # greenlet in gevent.sleep() was stuck, before)
        sleeper = items["sleeper"]
        assert sleeper["state"] == "idle", (interp, sleeper)
        assert sleeper["where"]["line"] == marker_line(
            SCHED_SCRIPT, framework + "-sleeper"), (interp, sleeper)
        if framework == "trio":
            assert parked["framework"] == "trio", parked
            # named by the call it waits in, not trio's trap under it
            assert parked["innermost"]["function"] == "Event.wait" and \
                parked["innermost"]["file"].endswith("/trio/_sync.py"), \
                parked
        else:
            assert parked["type"] == "Greenlet", parked
            # what the wait-for graph says it waits on (gevent's Event
            # keeps its switch), and nothing for the napper
            assert parked["waits_on"] == "gevent.event.Event", parked
            assert napper["waits_on"] is None, napper
            # the hub, running its loop: at its thread's frames
            hub = [g for g in doc[listed] if g["type"] == "Hub"]
            assert len(hub) == 1 and hub[0]["where"] and \
                hub[0]["where"]["function"] == "Hub.run" and \
                hub[0]["where"]["file"].endswith("/gevent/hub.py"), hub
        # The line output names them the same way (on one interpreter:
        # it is the same watch, only written as lines).
        if interp is not found[0]:
            assert_target_unharmed(target)
            continue
        text = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
        kind = "trio task" if framework == "trio" else "greenlet"
        stuck = [l for l in text.stdout.splitlines()
                 if " stuck " in l and " for " in l]
        assert any("%s 'parked'" % kind in l for l in stuck), text
        assert not [l for l in stuck if "'napper'" in l], text
        lines = text.stdout.splitlines()
        rest = lines[lines.index(next(l for l in lines
                                      if l.startswith("watch summary:"))):]
        said = [l for l in rest if "%s 'sleeper'" % kind in l]
        assert len(said) == 1 and said[0].split()[0] == "idle" and \
            ", sleeps in %s.sleep" % framework in said[0], text
        assert_target_unharmed(target)


@pytest.mark.parametrize("framework,listed", [("trio", "tasks"),
                                              ("gevent", "greenlets")])
def test_sched_unread_in_one_sample_is_not_gone(keeper, framework, listed):
    """A sample whose heap walk read but whose greenlets (or trio tasks)
    could not be read did not see them: they are neither gone nor new
    when the next sample sees them again, so the parked one is stuck
    for the whole watch.  (Before, it went "gone" at that sample and
    came back fresh, its stuck time started again.)"""
    found = interpreters_with(framework)
    if not found:
        pytest.skip("no interpreter here has %s (%s), or "
                    "COROSCOPE_TEST_PYTHONS left them out"
                    % (framework, ", ".join(SCHED_INTERPRETERS)))
    target = keeper.start_target(found[0], "watch_sched_target.py",
                                 framework)
    res, doc = watch_failing(target, framework.replace(
        "gevent", "greenlets") + ":4")
    assert doc["samples_failed"] == 0, doc
    items = by_name(doc[listed])
    assert not [i for i in doc[listed] if i["state"] == "gone"], items
    assert items["parked"]["state"] == "stuck", items["parked"]
    assert items["parked"]["stuck_for"] >= 3.0, items["parked"]
    assert "gone" not in res.stderr.decode(), res.stderr
    assert_target_unharmed(target)


# ---- --native: what a stuck thread is blocked in ----

@pytest.mark.parametrize("interp_id", WATCH_INTERPRETERS)
def test_native_says_what_a_stuck_thread_is_blocked_in(keeper, interp_id):
    interp = watch_interp(interp_id)
    target = keeper.start_target(interp, "watch_target.py")
    result = run_coroscope("watch", "--json", "--native",
                           *(WATCH_ARGS + [target.pid]))
    assert result.returncode == 0, result
    threads = by_name(result.json()["threads"])
    locked = threads["locked"]
    assert locked["state"] == "stuck", locked
    assert locked["stuck_for"] >= 3.0, locked
    # blocked on a threading.Lock forever: in a lock, in C
    assert locked["blocked_in"] == "lock", locked
    assert locked["native_function"], locked
    # the event line (on stderr with --json) says it too
    line = next((l for l in result.stderr.splitlines()
                 if " stuck thread %d 'locked'" % locked["tid"] in l), None)
    assert line is not None, result
    assert ", blocked in lock (%s)" % locked["native_function"] in line, line
    # the spinning thread is busy, never "blocked"
    assert threads["spinning"]["state"] == "busy", threads["spinning"]
    assert threads["spinning"]["blocked_in"] != "lock", threads["spinning"]
    assert_target_unharmed(target)


def test_no_native_without_the_option(watched):
    target, result = watched
    for item in result.json()["threads"]:
        assert item["blocked_in"] is None, item
        assert item["native_function"] is None, item


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_a_task_awaiting_moving_tasks_is_not_stuck(keeper, ident):
    """main() gathering a ticker that runs and a parked task
    (targets/gathers_workers.py) sat at its gather for the whole watch
    and was called stuck, as any main() of a healthy service (a helper's
    user round).  While a task it awaits moves, it is active; when all
    it awaits are stuck, so is it."""
    interp = interpreter_or_skip(ident)
    for mode, state in (("", "active"), ("parked", "stuck")):
        target = keeper.start_target(interp, "gathers_workers.py",
                                     *([mode] if mode else []))
        doc = run_coroscope("watch", "--json", "--for", "2s", "--interval",
                            "0.5s", "--stuck", "1s", target.pid).json()
        mains = [t for t in doc["tasks"]
                 if int(t["address"], 16) == target.ready["main"]]
        assert len(mains) == 1, doc["tasks"]
        assert mains[0]["state"] == state, (mode, mains[0])
        assert mains[0]["where"]["line"] == marker_line(
            target_script("gathers_workers.py"), "gather"), mains[0]
        target.proc.kill()
        target.proc.wait()
