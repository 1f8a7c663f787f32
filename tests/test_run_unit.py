"""tools/run-unit, which `make check` runs over the unit-test programs:
the counts it adds up, the programs it names as broken, and a hung one
killed after UNIT_TIMEOUT and named, not waited for.

The "programs" here are small shell scripts that behave as a unit-test
program does (tests/unit/check.h: a closing "NAME: N passed, N failed"
line), or as a broken one does.
"""

import os
import signal
import subprocess
import time

import pytest

RUN_UNIT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "tools", "run-unit")

PROGRAMS = {
    "test_good": 'echo "test_good: 5 passed, 0 failed"',
    "test_bad": 'echo "FAIL x.c:1: no"; echo "test_bad: 3 passed, 1 failed";'
                ' exit 1',
    "test_crash": 'echo "half"; kill -SEGV $$',
    "test_hang": 'echo "started"; echo $$ >"$0.pid"; exec sleep 600',
}


def make_programs(directory, names):
    for name in names:
        path = directory / name
        path.write_text("#!/bin/sh\n%s\n" % PROGRAMS[name])
        path.chmod(0o755)


def run_unit(directory, timeout_s):
    env = dict(os.environ, UNIT_TIMEOUT=str(timeout_s), UNIT_JOBS="2")
    start = time.monotonic()
    res = subprocess.run(["sh", RUN_UNIT, str(directory)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=120)
    return res, time.monotonic() - start


def test_counts_and_broken_programs(tmp_path):
    make_programs(tmp_path, ["test_good", "test_bad", "test_crash"])
    res, _ = run_unit(tmp_path, 60)
    out = res.stdout.decode()
    assert res.returncode != 0, out
    assert "FAIL x.c:1: no" in out, out
    assert "unit: did not finish cleanly: test_crash (exit 139)" in out, out
    # 5 + 3 passed; 1 failed check, and the crash counts as one
    assert out.rstrip().endswith("unit: 8 passed, 2 failed (3 programs)"), out


def test_all_good_passes(tmp_path):
    make_programs(tmp_path, ["test_good"])
    res, _ = run_unit(tmp_path, 60)
    out = res.stdout.decode()
    assert res.returncode == 0, out
    assert out.rstrip().endswith("unit: 5 passed, 0 failed (1 programs)"), out


def test_a_hung_program_is_killed_and_named(tmp_path):
    make_programs(tmp_path, ["test_good", "test_hang"])
    res, elapsed = run_unit(tmp_path, 2)
    out = res.stdout.decode()
    assert res.returncode != 0, out
    assert elapsed < 60, (elapsed, out)
    assert "started" in out, out   # its output so far is shown
    assert ("unit: did not finish cleanly: test_hang (timed out after 2 s)"
            in out), out
    assert out.rstrip().endswith("unit: 5 passed, 1 failed (2 programs)"), out


def alive(pid):
    try:
        os.kill(pid, 0)
        # a zombie no one has reaped yet is gone too
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        # (reaped between the two: reading its stat then fails with
        # ESRCH, which a clean clone's check met once)
        return False


@pytest.mark.parametrize("sig,status", [(signal.SIGINT, 130),
                                        (signal.SIGTERM, 143)])
def test_a_signal_to_the_group_reaches_a_hung_program(tmp_path, sig, status):
    """^C (or make's TERM) sent to run-unit's process group ends the
    program it runs too: timeout(1) must not take it into a group of its
    own, where it would run on, orphaned, until UNIT_TIMEOUT."""
    make_programs(tmp_path, ["test_hang"])
    pidfile = tmp_path / "test_hang.pid"
    env = dict(os.environ, UNIT_TIMEOUT="60", UNIT_JOBS="1")

    def default_signals():
        # CI may start the suite with SIGINT ignored, which a shell
        # cannot trap: give the children the default disposition.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    proc = subprocess.Popen(["sh", RUN_UNIT, str(tmp_path)], env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 30
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert time.monotonic() < deadline, "the program never started"
            assert proc.poll() is None, proc.returncode
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        os.killpg(proc.pid, sig)
        assert proc.wait(timeout=30) == status
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "the hung program outlived run-unit"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
