"""coroscope run's signals to the command: each process of the tree gets
each signal once (a second SIGTERM or SIGINT is "quit now, drop the
cleanup" to uvicorn, Celery and many graceful shutdowns), and SIGCONT
only where a process is stopped.

Whether a process saw a signal twice depends on whether the first was
delivered before the second was sent (signals pending at once merge), so
the tests count what coroscope sends: strace(1) on coroscope's own
process (not its children, which coroscope itself must be able to
ptrace) records its kill(2) calls.
"""

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (COROSCOPE, TIME_SCALE, control_interpreter,
                      coroscope_env, wait_until)

STRACE = shutil.which("strace")
pytestmark = pytest.mark.skipif(STRACE is None,
                                reason="strace is not installed "
                                       "(make deps installs it)")

# The command: writes its pid, then waits; its first SIGTERM or SIGINT
# starts a graceful shutdown (0.3 s), a second would end it at once with
# status 3.
GRACEFUL = """
import os, signal, sys, time
got = []
def on(sig, frame):
    got.append(sig)
    if len(got) > 1:
        os._exit(3)
signal.signal(signal.SIGTERM, on)
signal.signal(signal.SIGINT, on)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while not got:
    time.sleep(0.05)
time.sleep(0.3)
sys.exit(0)
"""

# A command whose child stops itself: SIGCONT is for that one only.
STOPPED_CHILD = """
import os, signal, sys, time
child = os.fork()
if child == 0:
    os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(100)
    os._exit(0)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d" % (os.getpid(), child))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
os.waitpid(child, 0)
"""

KILL = re.compile(r"^kill\((-?\d+), (SIG[A-Z]+)\)")


def default_signals():
    # CI may start the suite with SIGINT ignored, which coroscope would
    # inherit (and then never receive the SIGINT it should forward).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(tmp_path, run_args, code):
    py = control_interpreter()
    pid_file = tmp_path / "pid"
    trace = tmp_path / "trace.txt"
    argv = [STRACE, "-qq", "-o", str(trace), "-e", "trace=kill",
            "-e", "signal=none", COROSCOPE, "run"] + run_args + [
        "--", py.path, "-c", code, str(pid_file)]
    env = coroscope_env()
    if "ASAN_OPTIONS" in env:
        # (the sanitizer pass: LeakSanitizer cannot run under ptrace,
        # and exits 1 at the end; AddressSanitizer still watches)
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env=env, preexec_fn=default_signals)
    assert wait_until(lambda: pid_file.exists(), 30 * TIME_SCALE), \
        "the command never started"
    pids = [int(x) for x in pid_file.read_text().split()]
    return proc, pids, trace


def kills(trace):
    """(target, signal name) of each kill(2) coroscope made."""
    out = []
    with open(str(trace)) as f:
        for line in f:
            m = KILL.match(line.strip())
            if m:
                out.append((int(m.group(1)), m.group(2)))
    return out


def reaching(calls, pid, pgid, name):
    """The calls of kill(2) with signal name that reach process pid,
    a member of group pgid."""
    return [c for c in calls if c[1] == name and c[0] in (pid, -pgid)]


def finish(proc):
    try:
        status = proc.wait(timeout=40 * TIME_SCALE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("coroscope run did not end")
    return status


def test_timeout_sigterm_once(tmp_path):
    proc, (pid,), trace = start(tmp_path, ["--timeout", "1",
                                           "--sample-last", "0"], GRACEFUL)
    assert finish(proc) == 124
    calls = kills(trace)
    assert len(reaching(calls, pid, pid, "SIGTERM")) == 1, calls
    # never stopped: no SIGCONT it could have a handler for
    assert reaching(calls, pid, pid, "SIGCONT") == [], calls


def test_forwarded_sigint_once(tmp_path):
    proc, (pid,), trace = start(tmp_path, ["--timeout", "60"], GRACEFUL)
    # strace's child is coroscope
    with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
        coroscope = int(f.read().split()[0])
    os.kill(coroscope, signal.SIGINT)
    # the command ended gracefully (status 3 had it seen two)
    assert finish(proc) == 0
    calls = kills(trace)
    assert len(reaching(calls, pid, pid, "SIGINT")) == 1, calls


def test_stopped_member_continued(tmp_path):
    proc, (pid, child), trace = start(
        tmp_path, ["--timeout", "1", "--sample-last", "0"], STOPPED_CHILD)

    def stopped():
        with open("/proc/%d/stat" % child) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in "Tt"

    assert wait_until(stopped, 10 * TIME_SCALE), "the child never stopped"
    assert finish(proc) == 124
    calls = kills(trace)
    assert len(reaching(calls, child, pid, "SIGTERM")) == 1, calls
    assert len(reaching(calls, child, pid, "SIGCONT")) == 1, calls
    assert reaching(calls, pid, pid, "SIGCONT") == [], calls
    # both gone
    for p in (pid, child):
        assert not os.path.exists("/proc/%d" % p) or wait_until(
            lambda: not os.path.exists("/proc/%d" % p), 5), p
