"""coroscope must never harm its target.

targets/progress_target.py has two threads that each keep counting; the
counters it writes show whether the whole target is running.  After a dump,
and after coroscope is killed or interrupted while attached, the target
must run on, no longer traced.
"""

import json
import signal
import subprocess
import time

import pytest

from conftest import (TIME_SCALE, control_interpreter, run_coroscope,
                      task_states, task_tracers, wait_until)

HOLD_ENV = "COROSCOPE_TEST_HOLD_MS"


def read_counters(target):
    """(main, worker) counts the target last wrote."""
    path = target.workdir + "/counter.txt"
    for _ in range(50):
        try:
            with open(path) as f:
                parts = f.read().split()
            if len(parts) == 2:
                return int(parts[0]), int(parts[1])
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    pytest.fail("cannot read the target's counters from %s" % path)


def assert_progress(target, before=None, timeout=5.0):
    """Both of the target's threads advance by a few steps."""
    if before is None:
        before = read_counters(target)

    def advanced():
        now = read_counters(target)
        return now[0] >= before[0] + 3 and now[1] >= before[1] + 3

    assert wait_until(advanced, timeout, 0.05), \
        "target stopped making progress: counters %r then %r; stderr: %s" % (
            before, read_counters(target), target.stderr())


def assert_untraced(target, timeout=5.0):
    def free():
        tracers = task_tracers(target.pid)
        return tracers and not any(tracers.values())

    assert wait_until(free, timeout), \
        "target still traced: %r" % task_tracers(target.pid)
    states = task_states(target.pid)
    assert not [s for s in states.values() if s in "tT"], \
        "target thread still stopped: %r" % states


def start_progress(keeper, interp, idle_threads=0):
    args = ["{workdir}/counter.txt"]
    if idle_threads:
        args.append(str(idle_threads))
    return keeper.start_target(interp, "progress_target.py", *args)


# How coroscope holds the target: from its own main thread (a target of a
# few threads), or from a thread of its own that lets the target go by
# exiting (many threads; COROSCOPE_TEST_TRACER=thread forces it).
TRACERS = {"inline": {}, "thread": {"COROSCOPE_TEST_TRACER": "thread"}}


def hold_attached(keeper, target, hold_ms, *extra, env=None):
    """Start coroscope with a hold; return it once it stops the target."""
    tool_env = {HOLD_ENV: str(hold_ms)}
    tool_env.update(env or {})
    tool = keeper.spawn_coroscope(["dump", "--json"] + list(extra) +
                                  [str(target.pid)], env=tool_env)

    def attached():
        if tool.poll() is not None:
            return True
        tracers = task_tracers(target.pid)
        states = task_states(target.pid)
        return (tracers and all(p == tool.pid for p in tracers.values())
                and all(s in "tT" for s in states.values()))

    wait_until(attached, 10 * TIME_SCALE)
    if tool.poll() is not None:
        out, err = tool.communicate()
        pytest.fail("coroscope exited %s before the hold ended:\n%s%s"
                    % (tool.returncode, out, err))
    assert attached(), "coroscope did not stop every thread: tracers %r, " \
        "states %r" % (task_tracers(target.pid), task_states(target.pid))
    return tool


@pytest.fixture
def control_interp():
    i = control_interpreter()
    if i is None:
        pytest.skip("no Python interpreter found")
    return i


def test_target_progresses_after_dump(interp, keeper):
    target = start_progress(keeper, interp)
    res = run_coroscope("dump", "--json", target.pid)
    doc = res.json()
    assert sorted(t["name"] for t in doc["threads"]) == \
        ["MainThread", "worker"], doc["threads"]
    assert doc["stats"]["pause_ms"] >= 0
    assert_untraced(target)
    assert_progress(target)


def test_many_threads_let_go(interp, keeper):
    """100 more threads: coroscope holds them from a thread of its own,
    which lets them all go by exiting."""
    target = start_progress(keeper, interp, idle_threads=100)
    res = run_coroscope("dump", "--json", target.pid)
    doc = res.json()
    names = sorted(t["name"] for t in doc["threads"])
    assert names == sorted(["MainThread", "worker"] +
                           ["idle-%d" % i for i in range(100)]), names
    assert_untraced(target)
    assert_progress(target)


def test_dump_stops_target_while_reading(control_interp, keeper):
    """During the hold every thread is stopped: the counters freeze."""
    target = start_progress(keeper, control_interp)
    tool = hold_attached(keeper, target, 3000)
    first = read_counters(target)
    time.sleep(0.4)
    assert read_counters(target) == first, "target ran while attached"
    out, err = tool.communicate(timeout=30 * TIME_SCALE)
    assert tool.returncode == 0, (out, err)
    assert_untraced(target)
    assert_progress(target)


@pytest.mark.parametrize("tracer", sorted(TRACERS))
def test_sigkill_while_attached(control_interp, keeper, tracer):
    target = start_progress(keeper, control_interp)
    tool = hold_attached(keeper, target, 5000, env=TRACERS[tracer])
    before = read_counters(target)
    tool.kill()
    tool.communicate(timeout=10)
    assert tool.returncode == -signal.SIGKILL
    assert_untraced(target)
    assert_progress(target, before)


@pytest.mark.parametrize("tracer", sorted(TRACERS))
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT],
                         ids=["SIGTERM", "SIGINT"])
def test_signal_while_attached(control_interp, keeper, signum, tracer):
    target = start_progress(keeper, control_interp)
    tool = hold_attached(keeper, target, 5000, env=TRACERS[tracer])
    before = read_counters(target)
    sent = time.monotonic()
    tool.send_signal(signum)
    try:
        out, err = tool.communicate(timeout=3 * TIME_SCALE)
    except subprocess.TimeoutExpired:
        pytest.fail("coroscope ignored %s while attached" % signum.name)
    elapsed = time.monotonic() - sent
    # Promptly: well before the 5 s hold would have ended.
    assert elapsed < 3 * TIME_SCALE
    assert tool.returncode != 0, (out, err)
    for sign in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
        assert sign not in err, err
    assert_untraced(target)
    assert_progress(target, before)


def test_no_block_does_not_trace(control_interp, keeper):
    target = start_progress(keeper, control_interp)
    # If the hold applies with --no-block, it gives us time to look; if it
    # does not, coroscope simply finishes early.
    tool = keeper.spawn_coroscope(["dump", "--json", "--no-block",
                                   str(target.pid)], env={HOLD_ENV: "1500"})
    seen = []
    while tool.poll() is None:
        seen.append(task_tracers(target.pid))
        time.sleep(0.02)
    out, err = tool.communicate(timeout=30 * TIME_SCALE)
    assert tool.returncode == 0, (out, err)
    traced = [s for s in seen if any(s.values())]
    assert not traced, "--no-block traced the target: %r" % traced[:3]
    doc = json.loads(out)
    assert doc["stats"]["pause_ms"] == 0, doc["stats"]
    assert sorted(t["name"] for t in doc["threads"]) == \
        ["MainThread", "worker"]
    assert_untraced(target)
    assert_progress(target)


@pytest.mark.slow
def test_repeated_dumps_leave_target_healthy(control_interp, keeper):
    target = start_progress(keeper, control_interp)
    for _ in range(25):
        res = run_coroscope("dump", "--json", "--locals", target.pid)
        assert res.returncode == 0, res
    assert_untraced(target)
    assert_progress(target)
    assert target.proc.poll() is None
