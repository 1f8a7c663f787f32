"""Every failure has its own exit status and exactly one line on stderr.

Exit statuses (common/error.h): 2 usage, 3 no such process, 4 permission
denied, 5 not a Python process, 6 unsupported Python version, 7 the
process exited while being read.  No error may hang (run_coroscope has a
timeout) or leave a sanitizer report.
"""

import os
import re
import shutil
import signal
import subprocess

import pytest

from conftest import (COROSCOPE, TIME_SCALE, assert_no_sanitizer_report,
                      assert_one_error_line, control_interpreter, coroscope_env,
                      process_state, pyenv_python27, run_coroscope,
                      target_script, task_tracers, wait_until)

HOLD_ENV = "COROSCOPE_TEST_HOLD_MS"
NOBODY = 65534


@pytest.fixture
def control_interp():
    i = control_interpreter()
    if i is None:
        pytest.skip("no Python interpreter found")
    return i


def unused_pid():
    """A PID no process has: that of a child we started and reaped."""
    for _ in range(20):
        child = subprocess.Popen(["true"])
        child.wait()
        if not os.path.exists("/proc/%d" % child.pid):
            return child.pid
    pytest.fail("could not find an unused pid")


def start_progress(keeper, interp):
    return keeper.start_target(interp, "progress_target.py",
                               "{workdir}/counter.txt")


def wait_attached(tool, pid):
    def attached():
        if tool.poll() is not None:
            return True
        tracers = task_tracers(pid)
        return tracers and all(p == tool.pid for p in tracers.values())

    wait_until(attached, 10 * TIME_SCALE)
    if tool.poll() is not None:
        out, err = tool.communicate()
        pytest.fail("coroscope exited %s before the hold ended:\n%s%s"
                    % (tool.returncode, out, err))
    assert attached(), "coroscope did not attach: %r" % task_tracers(pid)


def finish(tool, timeout=30):
    """Wait for a background coroscope; return its (exit, stdout, stderr)."""
    try:
        out, err = tool.communicate(timeout=timeout * TIME_SCALE)
    except subprocess.TimeoutExpired:
        tool.kill()
        tool.communicate()
        pytest.fail("coroscope hung")
    assert_no_sanitizer_report(err)
    return tool.returncode, out, err


class _Finished(object):
    """A Result-like view of a background run, for assert_one_error_line."""

    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err

    def __repr__(self):
        return "exit %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            self.returncode, self.stdout, self.stderr)


# ---------------------------------------------------------------------------
# Usage

@pytest.mark.parametrize("args", [
    [],
    ["dump"],
    ["dump", "abc"],
    ["dump", "12abc"],
    ["dump", ""],
    ["dump", "0"],
    ["dump", "-5"],
    ["dump", "99999999999999999999"],
    ["dump", "1", "2"],
    ["dump", "--bogus", "1"],
    ["--bogus"],
    ["frobnicate", "1"],
], ids=lambda a: " ".join(a) or "no-args")
def test_usage_error(args):
    res = run_coroscope(*args)
    assert_one_error_line(res, 2)
    assert res.stdout == "", res


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["dump", "--help"]],
                         ids=" ".join)
def test_help(args):
    res = run_coroscope(*args)
    assert res.returncode == 0, res
    assert res.stderr == "", res
    if args[0] != "dump":
        for option in ("--json", "--locals", "--no-block", "--help",
                       "--version"):
            assert option in res.stdout, (option, res)
    else:
        for option in ("--json", "--locals", "--no-block"):
            assert option in res.stdout, (option, res)


def test_version():
    res = run_coroscope("--version")
    assert res.returncode == 0, res
    assert re.match(r"^coroscope \d+\.\d+\.\d+\nbuild id [0-9a-f]+ "
                    r"\((statically|dynamically) linked\)\n$", res.stdout), res


# ---------------------------------------------------------------------------
# The process

def test_no_such_process():
    pid = unused_pid()
    res = run_coroscope("dump", pid)
    assert_one_error_line(res, 3, "no such process", str(pid))


def test_no_such_process_json():
    pid = unused_pid()
    res = run_coroscope("dump", "--json", pid)
    assert_one_error_line(res, 3, "no such process")
    assert res.stdout == "", res


@pytest.mark.parametrize("count", [2, 3000])
def test_output_cannot_be_written(control_interp, keeper, count):
    """Output to a full device: exit 1 and one line, whether the JSON is
    written in line (a few kilobytes: more than stdio holds, so the
    write fails before the final flush) or by a writer thread (megabytes,
    written while the rest is made); never exit 0 with the output lost."""
    if not os.path.exists("/dev/full"):
        pytest.skip("/dev/full is absent")
    target = keeper.start_target(control_interp, "many_tasks_target.py",
                                 str(count))
    with open("/dev/full", "w") as full:
        res = subprocess.run([COROSCOPE, "dump", "--json", str(target.pid)],
                             stdin=subprocess.DEVNULL, stdout=full,
                             stderr=subprocess.PIPE, universal_newlines=True,
                             env=coroscope_env(None), timeout=120 * TIME_SCALE)
    assert_one_error_line(res, 1, "cannot write output",
                          "No space left on device")
    assert_no_sanitizer_report(res.stderr)
    assert process_state(target.pid) not in ("t", "T"), \
        "the target was left stopped"


def test_not_a_python_process(keeper):
    sleeper = keeper.spawn(["sleep", "60"])
    res = run_coroscope("dump", sleeper.pid)
    assert_one_error_line(res, 5, "not a Python process", str(sleeper.pid))
    assert sleeper.poll() is None
    assert not any(task_tracers(sleeper.pid).values())


def test_unsupported_python_version(keeper, tmp_path):
    py27 = pyenv_python27()
    if py27 is None:
        pytest.skip("no pyenv Python 2.7 installed")
    ready = str(tmp_path / "ready")
    code = ("import os, sys, time\n"
            "open(sys.argv[1] + '.tmp', 'w').close()\n"
            "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
            "time.sleep(600)\n")
    target = keeper.start_with_ready([py27, "-c", code, ready], ready,
                                     parse=False)
    res = run_coroscope("dump", target.pid)
    assert_one_error_line(res, 6, "unsupported", "2.7")
    assert target.proc.poll() is None
    assert not any(task_tracers(target.pid).values())


@pytest.fixture(scope="module")
def fake_pythons(tmp_path_factory):
    """{name: path} of targets/fake_python.c built as a future CPython
    ("python3.99") and as one with no version at all ("python3")."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build targets/fake_python.c")
    outdir = tmp_path_factory.mktemp("fakepy")
    built = {}
    for name, defines in (("python3.99", ["-DFAKE_VERSION_HEX=0x036300f0UL"]),
                          ("python3", [])):
        path = str(outdir / name)
        out = subprocess.run([cc, "-std=c11", "-O0", "-g", "-rdynamic"] +
                             defines + ["-o", path,
                                        target_script("fake_python.c")],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=120)
        assert out.returncode == 0, out.stdout
        built[name] = path
    return built


def test_future_python_version(keeper, fake_pythons, tmp_path):
    ready = str(tmp_path / "ready")
    target = keeper.start_with_ready([fake_pythons["python3.99"], ready],
                                     ready, parse=False)
    res = run_coroscope("dump", target.pid)
    assert_one_error_line(res, 6, "unsupported", "3.99")
    assert target.proc.poll() is None
    assert not any(task_tracers(target.pid).values())


def test_unrecognised_python_version(keeper, fake_pythons, tmp_path):
    ready = str(tmp_path / "ready")
    target = keeper.start_with_ready([fake_pythons["python3"], ready],
                                     ready, parse=False)
    res = run_coroscope("dump", target.pid)
    assert_one_error_line(res, 6, "version")
    assert target.proc.poll() is None
    assert not any(task_tracers(target.pid).values())


def _nobody_runner():
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) missing")
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to user nobody")
    # nobody must be able to run the binary at all.
    probe = subprocess.run(["setpriv", "--reuid=%d" % NOBODY,
                            "--regid=%d" % NOBODY, "--clear-groups", "--",
                            COROSCOPE, "--version"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd="/", timeout=30)
    assert probe.returncode == 0, \
        "user nobody cannot run %s: %r" % (COROSCOPE, probe.stderr)


def test_permission_denied_other_user(control_interp, keeper):
    _nobody_runner()
    target = start_progress(keeper, control_interp)
    res = run_coroscope("dump", target.pid, user=NOBODY, cwd="/")
    assert_one_error_line(res, 4, "permission denied", str(target.pid))
    assert target.proc.poll() is None


def test_permission_denied_already_traced(control_interp, keeper):
    target = start_progress(keeper, control_interp)
    first = keeper.spawn_coroscope(["dump", str(target.pid)],
                                   env={HOLD_ENV: "10000"})
    wait_attached(first, target.pid)
    res = run_coroscope("dump", target.pid)
    assert_one_error_line(res, 4, "permission denied",
                          "already traced by process %d" % first.pid)
    first.send_signal(signal.SIGTERM)
    finish(first)

    def free():
        tracers = task_tracers(target.pid)
        return tracers and not any(tracers.values())

    assert wait_until(free, 5), task_tracers(target.pid)
    assert target.proc.poll() is None


def test_process_exits_while_attached(control_interp, keeper):
    target = start_progress(keeper, control_interp)
    tool = keeper.spawn_coroscope(["dump", "--json", str(target.pid)],
                                  env={HOLD_ENV: "2000"})
    wait_attached(tool, target.pid)
    os.kill(target.pid, signal.SIGKILL)
    code, out, err = finish(tool)
    assert_one_error_line(_Finished(code, out, err), 7, "exited")
    assert out == ""


def _wait_zombie(pid):
    assert wait_until(lambda: process_state(pid) == "Z", 10), \
        "process %d did not become a zombie: %r" % (pid, process_state(pid))


def test_zombie_process(keeper):
    child = keeper.spawn(["true"])
    _wait_zombie(child.pid)       # not reaped: Popen.poll() not called
    res = run_coroscope("dump", child.pid)
    line = assert_one_error_line(res, res.returncode)
    assert res.returncode in (3, 7), res
    assert "no such process" in line or "exited" in line, res


def test_zombie_python_process(control_interp, keeper):
    target = start_progress(keeper, control_interp)
    os.kill(target.pid, signal.SIGKILL)
    _wait_zombie(target.pid)
    res = run_coroscope("dump", "--json", target.pid)
    line = assert_one_error_line(res, res.returncode)
    assert res.returncode in (3, 7), res
    assert "no such process" in line or "exited" in line, res
