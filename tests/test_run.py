"""coroscope run: a command that outlives its timeout is dumped, every
process of its tree, then stopped, tree and all; one that finishes in
time is left alone (its output and exit status unchanged).

Targets (tests/targets/run_*.py) write the pids of their tree to a file,
so each test can check that nothing of the command is left running.
"""

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import (COROSCOPE, DEBIAN, SANITIZED, TIME_SCALE,
                      assert_no_sanitizer_report, control_interpreter,
                      coroscope_env, debian_with, interpreter,
                      interpreter_or_skip,
                      interpreters_importing, marker_line, proc_status,
                      target_script, wait_until)

TIMEOUT = "2"            # the wrapped command's --timeout
TIMEOUT_TEXT = "2s"
# The await cycle's --timeout.  Its child must be parked for half the
# sampling window (the last half of the timeout) to be called blocked on
# its lock; on a loaded machine the two interpreters' starts took so long
# with 2 s that the child was still seen moving.
CYCLE_TIMEOUT = "4"
CYCLE_TIMEOUT_TEXT = "4s"
SLACK = 40.0             # how long coroscope run itself may take
PYTEST_PYTHON = "/usr/bin/python3"

# The interpreters every scenario runs over; the await cycle runs over
# all of them (in the sanitizer run, over these two only).
CORE_IDS = ("3.12", "3.11-debian")
CORE = [i for i in (interpreter(x) for x in CORE_IDS) if i is not None]
# The await cycle's tests in the sanitizer run (skipped on the others).
CYCLE_SANITIZED = pytest.mark.sanitizer_runs_on(*CORE_IDS)


class Run(object):
    def __init__(self, argv, returncode, stdout, stderr, elapsed):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed = elapsed

    def __repr__(self):
        return ("coroscope %s -> exit %s after %.1f s\n--- stdout ---\n%s\n"
                "--- stderr ---\n%s" % (" ".join(self.argv[1:]),
                                        self.returncode, self.elapsed,
                                        self.stdout[:3000],
                                        self.stderr[-12000:]))


def run_env(extra=None):
    env = coroscope_env(extra)
    # Never append to the step summary of a CI job running this suite.
    if not extra or "GITHUB_STEP_SUMMARY" not in extra:
        env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def coroscope_run(args, cwd=None, env=None, input=None, timeout=SLACK,
                  stdin=None):
    """Run `coroscope run ARGS`; a Run, or a test failure on a hang.
    stdin: an fd for its stdin (else input's bytes, else /dev/null).

    Output goes to files, not pipes: should coroscope die and leave
    processes behind, they would hold a pipe open and the wait for its
    end would last the whole timeout.
    """
    argv = [COROSCOPE, "run"] + [str(a) for a in args]
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as inp:
        inp.write(input or b"")
        inp.seek(0)
        if stdin is None:
            stdin = inp if input is not None else subprocess.DEVNULL
        proc = subprocess.Popen(argv, stdin=stdin, stdout=out,
                                stderr=err, env=run_env(env), cwd=cwd)
        try:
            proc.wait(timeout=timeout * TIME_SCALE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            err.seek(0)
            pytest.fail("coroscope %s hung; stderr: %r"
                        % (" ".join(argv[1:]), err.read()[-6000:]))
        out.seek(0)
        err.seek(0)
        res = Run(argv, proc.returncode,
                  out.read().decode("utf-8", "replace"),
                  err.read().decode("utf-8", "replace"),
                  time.monotonic() - start)
    assert_no_sanitizer_report(res.stderr, "from %r" % argv)
    return res


def read_json(path, what):
    assert os.path.exists(str(path)), "%s %s was not written" % (what, path)
    with open(str(path)) as f:
        return json.load(f)


def exists(pid):
    """Is there any process (even a zombie) with this pid?"""
    return os.path.exists("/proc/%d" % pid)


def group_members(pgid):
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid:
            members.append(int(name))
    return members


def assert_nothing_left(pids, what="the command"):
    left = [p for p in pids if exists(p)]
    assert not left, "processes of %s still there: %s" % (
        what, [(p, proc_status(p)) for p in left])


def kill_leftovers(pids):
    """After a failed test: leave nothing behind for the next one."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def sweep(text):
    """Kill every process whose command line mentions text (a test's
    own directory), whatever happened to coroscope."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as f:
                cmdline = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmdline:
            kill_leftovers([int(name)])


@pytest.fixture
def work(tmp_path):
    """A directory for one test; its processes die with the test."""
    yield tmp_path
    sweep(str(tmp_path))


def causes_after_timeout(args, cwd=None, env=None):
    """`coroscope run ARGS`, which must time out: its Run, and the lines
    of its 'likely cause' block."""
    res = coroscope_run(args, cwd=cwd, env=env)
    assert res.returncode == 124, res
    return res, likely_causes(res.stderr)


def pytest_causes(work, suite, name, timeout="4"):
    """Debian's pytest on a copy of target suite (as work/name), under
    `run --timeout`, which must time out: its Run and likely causes."""
    debian_with("pytest")
    shutil.copy(suite, str(work / name))
    return causes_after_timeout(
        ["--timeout", timeout, "--", DEBIAN, "-m", "pytest", "-q", "-p",
         "no:cacheprovider", name], cwd=str(work))


def likely_causes(stderr):
    """The lines of the 'likely cause' block of the text report."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("coroscope: likely cause"):
            block = []
            for more in lines[i + 1:]:
                if not more.startswith("  "):
                    break
                block.append(more)
            return block
    return []


def process_of(report, pid):
    for p in report["processes"]:
        if p["pid"] == pid:
            return p
    pytest.fail("process %d not in the report: %r"
                % (pid, [(p["pid"], p.get("command"))
                         for p in report["processes"]]))


def has_frame(process, script, line, function):
    for t in process["threads"]:
        for f in t["frames"]:
            if f["kind"] == "native":
                continue
            if (f["file"].endswith(os.sep + script) and f["line"] == line and
                    f["function"] == function):
                return True
    return False


def check_report_shape(report, timed_out, argv):
    assert report["schema"] == 1
    assert report["timed_out"] is timed_out
    assert report["command"] == [str(a) for a in argv]
    assert isinstance(report["causes"], list)
    for p in report["processes"]:
        for key in ("pid", "ppid", "command", "python"):
            assert key in p, "process entry lacks %r: %r" % (key, p)
        if p["python"] is not None:
            assert p["schema"] == 1 and "threads" in p, p
        else:
            assert p["error"], p


# ---------------------------------------------------------------------------
# An asyncio await cycle with a stuck Python child, over every interpreter

class CycleRun(object):
    pass


@pytest.fixture(scope="module")
def cycle(interp, tmp_path_factory):
    work = tmp_path_factory.mktemp("run-cycle")
    r = CycleRun()
    r.pids_file = work / "pids.json"
    r.report_file = work / "report.json"
    r.script = target_script("run_await_cycle.py")
    r.child_script = target_script("run_child.py")
    r.command = [interp.path, r.script, r.pids_file]
    r.res = coroscope_run(["--timeout", CYCLE_TIMEOUT,
                           "--report", r.report_file,
                           "--"] + r.command)
    r.pids = read_json(r.pids_file, "pids file") if os.path.exists(
        str(r.pids_file)) else None
    yield r
    sweep(str(work))


@CYCLE_SANITIZED
def test_cycle_times_out_with_124(cycle):
    res = cycle.res
    assert res.returncode == 124, res
    assert cycle.pids, "the target never got stuck: %r" % res
    assert ("coroscope: command timed out after %s; dumping 2 processes "
            "(2 Python)" % CYCLE_TIMEOUT_TEXT) in res.stderr, res


@CYCLE_SANITIZED
def test_cycle_leaves_nothing_running(cycle):
    assert cycle.pids, "the target never got stuck: %r" % cycle.res
    assert_nothing_left(cycle.pids.values())
    assert not group_members(cycle.pids["pid"]), "group members left"


@CYCLE_SANITIZED
def test_cycle_child_blocked_frame_named(cycle):
    """The child left the command's group (setsid): found all the same."""
    res, pids = cycle.res, cycle.pids
    assert pids, "the target never got stuck: %r" % res
    line = marker_line(cycle.child_script, "child-blocked")
    assert ('File "%s", line %d, in take_twice' % (cycle.child_script, line)
            in res.stderr), res
    report = read_json(cycle.report_file, "--report file")
    check_report_shape(report, True, cycle.command)
    child = process_of(report, pids["child"])
    assert child["ppid"] == pids["pid"]
    assert has_frame(child, "run_child.py", line, "take_twice"), child
    parent = process_of(report, pids["pid"])
    assert parent["ppid"] > 0 and parent["python"]["version"]
    # Tree order: the command first.
    assert report["processes"][0]["pid"] == pids["pid"]
    # A lock taken twice: the summary says so, with the line.
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes) if c.startswith(
        "  process %d: 1 waiting on threading.Lock 0x" % pids["child"])]
    assert head, res
    assert causes[head[0] + 1].strip().startswith(
        "thread %d (MainThread) at run_child.py:%d in take_twice"
        % (pids["child"], line)), causes


@CYCLE_SANITIZED
def test_cycle_tasks_named(cycle):
    res, pids = cycle.res, cycle.pids
    assert pids, "the target never got stuck: %r" % res
    causes = likely_causes(res.stderr)
    assert causes, "no likely cause: %r" % res
    # The cycle leads the summary, before the child's lock.
    assert causes[0] in (
        "  process %d: await cycle: ping -> pong -> ping" % pids["pid"],
        "  process %d: await cycle: pong -> ping -> pong" % pids["pid"]), res
    for task, mark in (("ping", "ping-awaits"), ("pong", "pong-awaits")):
        want = "task %s at %s:%d in %s" % (
            task, cycle.script, marker_line(cycle.script, mark), task)
        assert any(c.strip() == want for c in causes[1:3]), \
            "%r not in %r" % (want, causes)
    report = read_json(cycle.report_file, "--report file")
    assert report["causes"][0]["kind"] == "await_cycle"
    assert report["causes"][0]["pid"] == pids["pid"]


def run_timing_out(ident, name, work, timeout):
    """`run --timeout TIMEOUT` of target NAME READY_FILE under interpreter
    IDENT, which must time out: (its script, the Run, its ready file)."""
    py = interpreter_or_skip(ident)
    script = target_script(name)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", timeout, "--", py.path, script, ready])
    assert res.returncode == 124, res
    return script, res, read_json(ready, "ready file")


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_cycle_of_twins_named_apart(ident, work):
    """Two tasks with one name awaiting each other (3.6: both named after
    their coroutine): the cycle names each with its address, in run's
    cause and its details, the samples' list, the dump's await cycle and
    its wait-for graph.  Before, "await cycle: twin -> twin -> twin".  The tasks tree
    draws the main task, a root that is not last, with "|-"."""
    script, res, info = run_timing_out(ident, "twin_cycle.py", work, "3")
    a, b = ("0x%x" % i for i in info["twins"])
    causes = likely_causes(res.stderr)
    line = marker_line(script, "twin-awaits")
    assert causes[0] in (
        "  process %d: await cycle: twin %s -> twin %s -> twin %s"
        % (info["pid"], x, y, x) for x, y in ((a, b), (b, a))), causes
    for addr in (a, b):
        want = "task twin %s at %s:%d in twin" % (addr, script, line)
        assert any(c.strip() == want for c in causes[1:3]), (want, causes)
    out = res.stdout + res.stderr
    assert any(l in ("await cycle: twin %s -> twin %s -> twin %s"
                     % (x, y, x)) for l in out.splitlines()
               for x, y in ((a, b), (b, a))), out
    assert any(l.strip() == "task 'twin' %s -> task 'twin' %s -> "
               "task 'twin' %s" % (x, y, x) for l in out.splitlines()
               for x, y in ((a, b), (b, a))), out
    roots = [l for l in out.splitlines() if re.match(r"^[|`]- \(T\) ", l)]
    assert len(roots) == 2 and roots[0].startswith("|- (T) ") and \
        roots[1].startswith("`- (T) twin "), roots
    # The samples' list names each twin with its address too (before, two
    # identical lines).
    seen = seen_lines(res.stderr, info["pid"])
    for addr in (a, b):
        want = 'task "twin" (%s) stuck for ' % addr
        assert len([l for l in seen if l.startswith(want)]) == 1, (want, seen)


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_forked_worker_copies_no_tasks(ident, work):
    """A process pool's worker that multiprocessing forked holds copies
    of its parent's tasks, the one that forked it "running" on its
    thread.  They are not its causes ("event loop blocked", "stuck
    task"): they never run there.  The samples count them apart, with
    the pool's idle manager and feeder threads; the worker's own thread
    is listed at its job's line; the parent keeps its own causes, and
    its task awaiting the job names the worker process and the job's
    line."""
    py = interpreter_or_skip(ident)
    script = target_script("run_pool_fork.py")
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", "4", "--report", report, "--",
                         py.path, script, ready])
    assert res.returncode == 124, res
    info = read_json(ready, "ready file")
    pid, worker = info["pid"], info["worker"]
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    assert not any(c.startswith("  process %d: " % worker) for c in heads), \
        causes
    stuck = [i for i, c in enumerate(causes)
             if c.startswith("  process %d: stuck task: " % pid)]
    assert len(stuck) == 1, causes
    # the parent's wait leads to the worker process and the job's line
    job = "run_pool_fork.py:%d in job" % marker_line(script, "job-sleep")
    assert re.match(r"^ +its job runs in process %d at \S*%s$"
                    % (worker, re.escape(job)),
                    causes[stuck[0] + 2]), causes
    # (the queue's feeder thread, idle in its Condition: no cause)
    assert not any("threading.Condition" in c for c in heads), causes
    seen = seen_lines(res.stderr, worker)
    # (its job sleeps: the line says when it wakes, as the dump does)
    assert any(l.startswith('thread %d "MainThread" stuck' % worker) and
               re.sub(r", sleeps in time\.sleep, wakes in [0-9.]+s$", "",
                      l).endswith(job) for l in seen), seen
    assert not any(l.startswith("task ") for l in seen), seen
    assert any("idle by design, not listed: a copy of the parent's task, "
                "made by fork (2)" in l for l in seen), seen
    doc = read_json(report, "--report file")
    proc = process_of(doc, worker)
    copies = proc["sampling"]["tasks"]
    assert len(copies) == 2 and all(
        t["idle"] == "a copy of the parent's task, made by fork"
        for t in copies), copies
    assert proc["tasks_copied_at_fork"] is True and len(proc["tasks"]) == 2
    assert process_of(doc, pid)["tasks_copied_at_fork"] is False
    assert "\nThis process is a child multiprocessing forked: its tasks " \
        "are copies of its parent's at the fork, which it never runs.\n" \
        in res.stdout + res.stderr, res
    # (on 3.6 "3 idle by design": its types module's async generator)
    assert any(re.match(r"(2 threads|3) idle by design, not listed: ", l)
               and "a process pool's manager thread (1)" in l
               for l in seen_lines(res.stderr, pid)), res.stderr


@pytest.mark.parametrize("ident,method", (
    ("3.6", "fork"), ("3.7", "fork"), ("3.8", "fork"),
    ("3.11-debian", "fork"), ("3.12", "forkserver"), ("3.14", "fork"),
    ("3.14", "forkserver")))
def test_mp_pool_job_named(ident, method, work):
    """multiprocessing.Pool.map() waiting on a job that never ends: the
    cause of the parent's wait on its workers names the worker still
    running a job, at the job's line; the idle worker, which reads its
    task queue (a pipe the parent holds the write end of), is not said
    to be blocked reading it.  On 3.6 and 3.7 a pool's result does not
    know its pool: the Pool is map()'s (before, the cause was the
    thread's "waits in map (pool.py)", and a handler thread "waits in
    _bootstrap").  With the fork server (3.14's default start method)
    the workers are its children, not the parent's (before, no worker
    was named)."""
    py = interpreter_or_skip(ident)
    script = target_script("run_mp_pool.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script, ready,
                         method])
    assert res.returncode == 124, res
    info = read_json(ready, "ready file")
    causes = likely_causes(res.stderr)
    job = "run_mp_pool.py:%d in work" % marker_line(script, "mp-job")
    line = r"^ +pool worker process %d at \S*%s: a job still running$" % (
        info["worker"], re.escape(job))
    assert [c for c in causes if re.match(line, c)], causes
    assert "blocked reading" not in res.stderr, res
    assert not [c for c in causes if " waits in " in c], causes


@pytest.mark.parametrize("ident,method", (
    ("3.6", None), ("3.11-debian", None), ("3.12", "forkserver"),
    ("3.14", None)))
def test_process_pool_result_names_job(ident, method, work):
    """A thread waiting in Future.result() for a ProcessPoolExecutor's
    job: its cause names the worker process running the job, at the
    job's line, as a task's await of run_in_executor() does (before,
    only "waits in Future.result").  3.14's default start method is the
    fork server, whose child the worker is."""
    py = interpreter_or_skip(ident)
    script = target_script("run_pool_result.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script, ready] +
                        ([method] if method else []))
    assert res.returncode == 124, res
    info = read_json(ready, "ready file")
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes) if re.match(
        r'^  process \d+: thread \d+ "MainThread" waits in '
        r'(Future\.)?result \(_base\.py\)', c)]
    assert len(head) == 1, causes
    here = "run_pool_result.py:%d in <module>" % marker_line(script, "result")
    job = "run_pool_result.py:%d in job" % marker_line(script, "job-sleep")
    assert re.match(r"^ +called at \S*%s: " % re.escape(here),
                    causes[head[0] + 1]), causes
    assert re.match(r"^ +its job runs in process %d at \S*%s$"
                    % (info["worker"], re.escape(job)),
                    causes[head[0] + 2]), causes



@pytest.mark.not_sanitized("on 3.12, which the sanitizer pass leaves out")
def test_mp_process_join_deadlock_said(work):
    """A parent joining a multiprocessing.Process that waits for a
    message the parent never sends: the child is blocked reading a pipe
    the parent holds the write end of (said of a Process, unlike a
    pool's worker, which reads its tasks so by design)."""
    script, res, info = run_timing_out("3.12", "run_mp_join.py", work, "3")
    causes = "\n".join(likely_causes(res.stderr))
    assert re.search(r"waiting on multiprocessing\.\S*Process 0x[0-9a-f]+ "
                     r"\(pid %d; blocked reading its fd \d+, a pipe this "
                     r"process holds the write end of as fd \d+\)"
                     % info["child"], causes), causes


# ---------------------------------------------------------------------------
# A thread deadlock on two locks

@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_lock_deadlock(py, work):
    pids_file = work / "pids.json"
    report_file = work / "report.json"
    summary_file = work / "step-summary.md"
    summary_file.write_text("earlier step\n")
    script = target_script("run_deadlock.py")
    command = [py.path, script, pids_file]
    res = coroscope_run(["--timeout", TIMEOUT, "--report", report_file,
                         "--"] + command,
                        env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    pids = read_json(pids_file, "pids file")
    try:
        assert res.returncode == 124, res
        a_line = marker_line(script, "a-blocked")
        b_line = marker_line(script, "b-blocked")
        causes = likely_causes(res.stderr)
        # The wait-for graph proves the cycle, holders and all: it leads,
        # and no guessed "possible deadlock" of the same threads is left.
        head = "  process %d: lock cycle: thread " % pids["pid"]
        assert causes and causes[0].startswith(head), res
        for name in ("worker-a", "worker-b"):
            assert causes[0].count("(%s) -> threading.Lock 0x" % name) == 1, \
                causes[0]
        assert "possible deadlock" not in res.stderr, res
        assert "blocked acquiring a lock" not in res.stderr, res
        # Each thread's line, then where it took the lock it holds.
        details = [c.strip() for c in causes[1:5]]
        for name, function, line, source, took, took_source in (
                ("worker-a", "take_a_then_b", a_line, "with lock_b:",
                 marker_line(script, "a-takes"), "with lock_a:"),
                ("worker-b", "take_b_then_a", b_line, "with lock_a:",
                 marker_line(script, "b-takes"), "with lock_b:")):
            at = [i for i, d in enumerate(details)
                  if re.match(r"thread \d+ \(%s\) at run_deadlock\.py:%d "
                              r"in %s \(stuck for at least [0-9.]+s\): %s"
                              % (name, line, function, source), d)]
            assert len(at) == 1 and at[0] + 1 < len(details), \
                (name, details, res)
            assert re.match(r"holding threading\.Lock 0x[0-9a-f]+ \(locked\) "
                            r"since run_deadlock\.py:%d in %s: %s"
                            % (took, function, took_source),
                            details[at[0] + 1]), (name, details, res)

        report = read_json(report_file, "--report file")
        check_report_shape(report, True, command)
        proc = process_of(report, pids["pid"])
        assert has_frame(proc, "run_deadlock.py", a_line, "take_a_then_b")
        assert has_frame(proc, "run_deadlock.py", b_line, "take_b_then_a")
        assert report["causes"][0]["kind"] == "lock_cycle"
        assert len(report["causes"][0]["details"]) == 4
        assert "deadlock" not in [c["kind"] for c in report["causes"]]
        # A hang report comes with native frames: each worker is seen
        # blocked in the lock's C acquire, under its Python frames.
        workers = [t for t in proc["threads"]
                   if t["name"] in ("worker-a", "worker-b")]
        assert len(workers) == 2, proc["threads"]
        for t in workers:
            assert t.get("blocked_in") == "lock", t
            assert any(f["kind"] == "native" for f in t["frames"]), t

        md = summary_file.read_text()
        assert md.startswith("earlier step\n"), "summary not appended: %r" % md
        assert "### coroscope: command timed out after %s" % TIMEOUT_TEXT in md
        # (text as rendered: Markdown's backslash escapes of punctuation
        # undone; code spans have none)
        shown = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", md)
        assert ("process %d: lock cycle: thread " % pids["pid"]) in shown, md
        assert "`worker-a`" in md and "`worker-b`" in md, md
        assert "`run_deadlock.py:%d`" % a_line in md, md

        assert_nothing_left([pids["pid"]])
    finally:
        kill_leftovers([pids["pid"]])


# ---------------------------------------------------------------------------
# Commands that finish in time: nothing changes

@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_finishing_command_unchanged(py, tmp_path):
    command = [py.path, target_script("run_echo.py"), "7"]
    direct = subprocess.run(command, input=b"hello", stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=60)
    report = tmp_path / "report.json"
    res = coroscope_run(["--timeout", "60", "--report", report,
                         "--"] + command, input=b"hello")
    # No report without a dump (the check at start leaves nothing).
    assert not report.exists(), res
    assert res.returncode == 7 == direct.returncode, res
    assert res.stdout == direct.stdout.decode(), res
    assert res.stdout.startswith("out:HELLO|blocked=[]|"), res
    # Not one word of coroscope's own, and no report without a dump.
    assert res.stderr == "err:hello\n" == direct.stderr.decode(), res
    assert res.elapsed < 10, res


def test_exit_by_signal_is_128_plus_signal():
    py = control_interpreter()
    res = coroscope_run(["--", py.path, "-c",
                         "import os, signal; "
                         "os.kill(os.getpid(), signal.SIGTERM)"])
    assert res.returncode == 128 + signal.SIGTERM, res
    assert res.stderr == "", res


def test_options_go_to_the_command():
    """Options after the command's name are the command's, -- or not."""
    res = coroscope_run(["--timeout", "30", "sh", "-c", "exit 3", "--timeout"])
    assert res.returncode == 3, res


def test_command_not_found_is_127(work):
    res = coroscope_run(["--", str(work / "no-such-command")])
    assert res.returncode == 127, res
    assert res.stderr.startswith("coroscope: cannot run "), res
    res = coroscope_run(["--", str(work)])
    assert res.returncode == 126, res


@pytest.mark.parametrize("args,needle", [
    ([], "missing COMMAND"),
    (["--timeout", "soon", "--", "true"], "invalid duration 'soon'"),
    (["--kill-after", "-1", "--", "true"], "invalid duration '-1'"),
    (["--timeout", "400d", "--", "true"], "too long"),
    (["--timeout"], "needs a value"),
    (["--bogus", "--", "true"], "unknown option"),
    (["--sample-last", "soon", "--", "true"], "invalid duration 'soon'"),
])
def test_usage_errors(args, needle):
    res = coroscope_run(args)
    assert res.returncode == 2, res
    assert res.stderr.startswith("coroscope: ") and needle in res.stderr, res


# ---------------------------------------------------------------------------
# A hanging pytest run (Debian's python3-pytest)

def test_hanging_pytest(work):
    if not os.access(PYTEST_PYTHON, os.X_OK):
        pytest.skip("no %s" % PYTEST_PYTHON)
    test_file = work / "test_hang.py"
    test_file.write_text(
        "import threading\n"
        "\n"
        "\n"
        "def test_blocks_forever():\n"
        "    threading.Event().wait()  # MARK: test-hangs\n")
    line = marker_line(str(test_file), "test-hangs")
    report_file = work / "report.json"
    command = [PYTEST_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               str(test_file)]
    res = coroscope_run(["--timeout", "3", "--report", report_file, "--"]
                        + command, cwd=str(work))
    report = read_json(report_file, "--report file")
    pids = [p["pid"] for p in report["processes"]]
    try:
        assert res.returncode == 124, res
        check_report_shape(report, True, command)
        assert has_frame(report["processes"][0], "test_hang.py", line,
                         "test_blocks_forever"), report
        assert ('File "%s", line %d, in test_blocks_forever'
                % (test_file, line)) in res.stderr, res
        causes = "\n".join(likely_causes(res.stderr))
        # One cause, the graph's, with the test's line and its source
        # (a second, "waits in Event.wait (threading.py)", said it again)
        assert "1 waiting on threading.Event 0x" in causes, res
        assert ("test_hang.py:%d in test_blocks_forever" % line) in causes, res
        assert ": threading.Event().wait()  # MARK: test-hangs" in causes, res
        assert "waits in Event.wait" not in causes, res
        assert_nothing_left(pids)
    finally:
        kill_leftovers(pids)


# ---------------------------------------------------------------------------
# Trees that try to escape, commands that resist

def test_escaped_daemon_is_dumped_and_stopped(work):
    py = control_interpreter()
    pids_file = work / "pids.json"
    report_file = work / "report.json"
    res = coroscope_run(["--timeout", "1", "--report", report_file, "--",
                         py.path, target_script("run_daemon.py"), pids_file])
    pids = read_json(pids_file, "pids file")
    try:
        assert res.returncode == 124, res
        report = read_json(report_file, "--report file")
        daemon = process_of(report, pids["daemon"])
        assert has_frame(daemon, "run_daemon.py",
                         marker_line(target_script("run_daemon.py"),
                                     "daemon-sleeps"), "daemon_sleeps")
        assert_nothing_left(pids.values())
    finally:
        kill_leftovers(pids.values())


def test_sigterm_ignored_then_sigkill(work):
    py = control_interpreter()
    pid_file = work / "pid"
    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
            "while True:\n"
            "    time.sleep(100)\n")
    res = coroscope_run(["--timeout", "1", "--kill-after", "0.5", "--",
                         py.path, "-c", code, pid_file])
    pid = int(pid_file.read_text())
    try:
        assert res.returncode == 124, res
        assert "SIGKILL after 0.5s" in res.stderr, res
        assert 1.5 <= res.elapsed, res
        assert_nothing_left([pid])
    finally:
        kill_leftovers([pid])


def test_non_python_processes_listed(work):
    report_file = work / "report.json"
    # Odd durations, to find the sleeps should coroscope fail.
    script = "sleep 30171 & sleep 30172; :"
    try:
        res = coroscope_run(["--timeout", "1", "--report", report_file, "--",
                             "sh", "-c", script])
        assert res.returncode == 124, res
        assert "dumping 3 processes (0 Python)" in res.stderr, res
        report = read_json(report_file, "--report file")
        check_report_shape(report, True, ["sh", "-c", script])
        commands = sorted(p["command"] for p in report["processes"])
        assert commands == ["sh -c " + script, "sleep 30171",
                            "sleep 30172"], report
        for p in report["processes"]:
            assert p["python"] is None
            assert p["error"] == "not a Python process"
        assert_nothing_left([p["pid"] for p in report["processes"]])
    finally:
        sweep("sleep 3017")


# ---------------------------------------------------------------------------
# Signals to coroscope while the command runs

def default_signals():
    # CI may start the suite with SIGINT ignored, which coroscope would
    # inherit: the signals these tests send must reach it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start_sleeper(work, status, extra_args=()):
    py = control_interpreter()
    pids_file = work / "pids.json"
    release = work / "release"
    errors = open(str(work / "stderr.txt"), "w")
    argv = [COROSCOPE, "run"] + list(extra_args) + [
        "--", py.path, target_script("run_sleeper.py"), str(pids_file),
        str(release), str(status)]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=errors,
                            env=run_env(), preexec_fn=default_signals)
    errors.close()
    assert wait_until(lambda: os.path.exists(str(pids_file)), 20), \
        "the sleeper never started"
    return proc, read_json(pids_file, "pids file")["pid"], release


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


def test_sigusr1_dumps_without_killing(work):
    report_file = work / "report.json"
    proc, pid, release = start_sleeper(work, 5,
                                       ["--report", str(report_file)])
    try:
        proc.send_signal(signal.SIGUSR1)

        def report():
            try:
                with open(str(report_file)) as f:
                    return json.load(f)
            except (OSError, ValueError):
                return None

        data = wait_until(report, 20 * TIME_SCALE)
        assert data, "no report after SIGUSR1"
        assert data["timed_out"] is False
        line = marker_line(target_script("run_sleeper.py"), "sleeper-polls")
        assert has_frame(process_of(data, pid), "run_sleeper.py", line,
                         "wait_for"), data
        time.sleep(0.2)
        assert proc.poll() is None and exists(pid), "the command was stopped"
        release.write_text("")
        assert proc.wait(timeout=20 * TIME_SCALE) == 5
        with open(str(work / "stderr.txt")) as f:
            err = f.read()
        assert_no_sanitizer_report(err)
        assert ("coroscope: SIGUSR1: snapshot of the running command; "
                "dumping 1 process (1 Python)") in err, err
        assert "stopping the command" not in err, err
    finally:
        stop(proc)
        kill_leftovers([pid])


def test_sigusr1_during_the_samples_says_their_span(work):
    """Sampling from 1 s (--timeout 60, --sample-last 59), a SIGUSR1 2 s
    later: the samples span about 2 s, not the 59 of the window, which
    the text said before."""
    proc, pid, release = start_sleeper(
        work, 0, ["--timeout", "60", "--sample-last", "59"])
    try:
        time.sleep(2)
        proc.send_signal(signal.SIGUSR1)

        def spans():
            with open(str(work / "stderr.txt")) as f:
                return re.findall(r"^coroscope: sampled over the last "
                                  r"([0-9.]+)s \(", f.read(), re.M)

        span = wait_until(spans, 20 * TIME_SCALE)
        assert span and 0.5 <= float(span[0]) < 30, span
        release.write_text("")
        assert proc.wait(timeout=20 * TIME_SCALE) == 0
    finally:
        stop(proc)
        kill_leftovers([pid])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_are_forwarded(work, sig):
    proc, pid, release = start_sleeper(work, 0)
    try:
        proc.send_signal(sig)
        status = proc.wait(timeout=20 * TIME_SCALE)
        # Python dies of SIGTERM; SIGINT raises KeyboardInterrupt (exit 1,
        # or 130 from 3.8 on... as the interpreter decides): either way
        # not the status of coroscope itself and the command is gone.
        if sig == signal.SIGTERM:
            assert status == 128 + signal.SIGTERM, status
        else:
            assert status in (1, 128 + signal.SIGINT), status
        assert_nothing_left([pid])
    finally:
        stop(proc)
        kill_leftovers([pid])


def test_terminal_goes_to_the_command():
    """With a terminal, the command is its foreground group: it reads it
    (no SIGTTIN), and Ctrl-C would reach it directly."""
    py = control_interpreter()
    code = ("import os; "
            "print('foreground', os.tcgetpgrp(0) == os.getpgrp()); "
            "print('got', input())")
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(COROSCOPE, [COROSCOPE, "run", "--", py.path, "-c", code],
                      run_env())
        finally:
            os._exit(127)
    output = b""
    try:
        os.write(fd, b"hello\n")
        deadline = time.monotonic() + 30 * TIME_SCALE
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break       # EIO: every writer of the terminal is gone
            if not chunk:
                break
            output += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    text = output.decode("utf-8", "replace")
    assert_no_sanitizer_report(text)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, text)
    assert "foreground True" in text and "got hello" in text, text


def test_no_native_leaves_native_frames_out(work):
    py = CORE[0]
    pids_file = work / "pids.json"
    report_file = work / "report.json"
    command = [py.path, target_script("run_deadlock.py"), pids_file]
    res = coroscope_run(["--timeout", TIMEOUT, "--report", report_file,
                         "--no-native", "--"] + command)
    pids = read_json(pids_file, "pids file")
    try:
        assert res.returncode == 124, res
        proc = process_of(read_json(report_file, "--report file"),
                          pids["pid"])
        frames = [f for t in proc["threads"] for f in t["frames"]]
        assert frames and all(f["kind"] != "native" for f in frames), proc
        assert all("blocked_in" not in t for t in proc["threads"]), proc
    finally:
        kill_leftovers([pids["pid"]])


def test_help_lists_run_options():
    out = subprocess.run([COROSCOPE, "--help"], stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=30)
    for opt in ("--timeout", "--report", "--kill-after", "--no-native",
                "--sample-last"):
        assert opt in out.stdout


# ---------------------------------------------------------------------------
# Samples before the dump (--sample-last): real stuck durations

SAMPLED_IDS = ("3.8", "3.13", "3.11-debian", "3.14")
SAMPLED = [i for i in (interpreter(x) for x in SAMPLED_IDS) if i is not None]
SAMPLE_WINDOW = 2.0


class SampledRun(object):
    pass


@pytest.fixture(scope="module", params=SAMPLED, ids=[i.id for i in SAMPLED])
def sampled(request, tmp_path_factory):
    """One run of run_sampled.py per interpreter: 4 s of timeout, the
    last 2 s sampled; the report, the text and the step summary."""
    py = request.param
    if SANITIZED and py.id not in CORE_IDS + ("3.13",):
        pytest.skip("the sanitizer run covers %s and 3.13"
                    % ", ".join(CORE_IDS))
    work = tmp_path_factory.mktemp("run-sampled")
    r = SampledRun()
    r.script = target_script("run_sampled.py")
    r.ready = work / "ready.json"
    r.report_file = work / "report.json"
    r.summary_file = work / "summary.md"
    r.res = coroscope_run(["--timeout", "4", "--sample-last", "2s",
                           "--report", r.report_file, "--", py.path,
                           r.script, r.ready],
                          env={"GITHUB_STEP_SUMMARY": str(r.summary_file)})
    try:
        assert r.res.returncode == 124, r.res
        r.pids = read_json(r.ready, "ready file")
        r.report = read_json(r.report_file, "--report file")
        r.proc = process_of(r.report, r.pids["pid"])
        assert "sampling" in r.proc, "not sampled: %r" % r.res
        r.sampling = r.proc["sampling"]
        yield r
    finally:
        sweep(str(work))


def sampled_task(r, name):
    found = [t for t in r.sampling["tasks"] if t["name"] == name]
    assert len(found) == 1, (name, r.sampling["tasks"])
    return found[0]


def sampled_thread(r, name):
    tid = r.pids["tids"][name]
    found = [t for t in r.sampling["threads"] if t["tid"] == tid]
    assert len(found) == 1, (name, tid, r.sampling["threads"])
    return found[0]


def test_sampled_window(sampled):
    s = sampled.sampling
    assert s["window_s"] == SAMPLE_WINDOW, s
    # at least a sample in the window, and the dump
    assert s["samples"] >= 2, s


def test_task_on_event_is_stuck_the_whole_window(sampled):
    parked = sampled_task(sampled, "parked")
    assert parked["state"] == "stuck", parked
    assert parked["at_least"] is True, parked
    # the first sample is taken a whole window before the dump
    assert parked["stuck_for"] >= SAMPLE_WINDOW - 0.01, parked
    line = marker_line(sampled.script, "event-wait")
    assert parked["where"]["line"] == line, parked
    assert parked["where"]["file"].endswith("run_sampled.py"), parked
    # the text report says so, and the cause naming the Event too
    text = sampled.res.stderr
    assert 'task "parked" stuck for at least ' in text, sampled.res
    causes = "\n".join(likely_causes(text))
    assert "waiting on asyncio.Event" in causes, causes
    assert any("task 'parked'" in c and "(stuck for at least" in c
               for c in likely_causes(text)), causes
    md = sampled.summary_file.read_text()
    assert "**Stuck or busy**" in md and "parked" in md, md


def run_heartbeat(ident, how, work):
    """run_heartbeat.py HOW under `coroscope run`, the last 2 s of 4
    sampled: the script, the run, and the sampled tasks by name."""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    report = work / "report.json"
    script = target_script("run_heartbeat.py")
    res = coroscope_run(["--timeout", "4", "--sample-last", "2s",
                         "--report", report, "--", py.path, script,
                         ready, how])
    assert res.returncode == 124, res
    proc = process_of(read_json(report, "--report file"),
                      read_json(ready, "ready file")["pid"])
    return script, res, {t["name"]: t for t in proc["sampling"]["tasks"]}


@pytest.mark.parametrize("ident,how", (("3.6", "wait_for"),
                                       ("3.11-debian", "wait_for"),
                                       ("3.14", "wait_for"),
                                       ("3.12", "sleep")))
def test_heartbeat_is_not_stuck(ident, how, work):
    """A task beating every 0.3 s on a bounded wait, its loop's thread
    otherwise idle: each sampling window sees at most one wake, which
    the samples cannot tell from their own, and the task the same at
    every sample.  It is not stuck: its wait's bound has passed while
    the thread waits in its selector.  The task parked on an Event in
    the same loop is."""
    script, res, tasks = run_heartbeat(ident, how, work)
    assert tasks["parked"]["state"] == "stuck", tasks
    beat = tasks["heartbeat"]
    assert beat["state"] != "stuck" and beat["stuck_for"] < 1, beat
    assert beat["where"]["line"] == marker_line(
        script, "beat-" + how.replace("uvloop-", "").replace("_", "-")), beat
    assert 'task "heartbeat"' not in res.stderr, res


WITH_UVLOOP = interpreters_importing(("3.11-debian",), "uvloop")


@pytest.mark.skipif(not WITH_UVLOOP, reason="uvloop is not installed for "
                    "Debian's 3.11 here, or COROSCOPE_TEST_PYTHONS left it "
                    "out")
@pytest.mark.parametrize("how,stuck", (("uvloop-wait_for", False),
                                       ("uvloop-spin", True)))
def test_heartbeat_on_uvloop(how, stuck, work):
    """On uvloop's loop, which runs in C with no selector's frame, the
    heartbeat woke when its thread waits in epoll_wait(2) with no task's
    step running; not when a task spins in its step."""
    script, res, tasks = run_heartbeat(WITH_UVLOOP[0].id, how, work)
    beat = tasks["heartbeat"]
    assert (beat["state"] == "stuck") == stuck, beat
    assert beat["where"]["line"] == marker_line(script, "beat-wait-for"), \
        beat


@pytest.mark.parametrize("ident,how", (("3.11-debian", "spin"),
                                       ("3.11-debian", "stopped"),
                                       ("3.13", "spin")))
def test_heartbeat_that_cannot_wake_is_stuck(ident, how, work):
    """The same heartbeat where its loop cannot run its timers: a task
    spinning in its step on the loop's thread (which runs), or its loop
    stopped while another runs on the thread.  It is stuck (a rule that
    took the thread's running as the loop's called it moving)."""
    script, res, tasks = run_heartbeat(ident, how, work)
    beat = tasks["heartbeat"]
    assert beat["state"] == "stuck" and beat["stuck_for"] >= 1.5, beat
    assert beat["where"]["line"] == marker_line(script, "beat-wait-for"), \
        beat


def test_task_sleeping_in_a_loop_is_not_stuck(sampled):
    napper = sampled_task(sampled, "napper")
    assert napper["state"] != "stuck", napper
    assert napper["stuck_for"] == 0, napper
    # the same line at every sample all the same
    assert napper["where"]["line"] == marker_line(sampled.script,
                                                  "task-nap"), napper
    assert 'task "napper"' not in sampled.res.stderr, sampled.res
    assert not any("napper" in c for c in likely_causes(sampled.res.stderr))


def test_spinning_thread_is_busy(sampled):
    spin = sampled_thread(sampled, "spinning")
    assert spin["state"] == "busy", spin
    assert spin["busy"] > 0, spin
    assert spin["where"]["line"] == marker_line(sampled.script, "spin"), spin
    busy = [c for c in likely_causes(sampled.res.stderr)
            if '"spinning" is busy, ' in c]
    assert busy and "% of a CPU" in busy[0], sampled.res
    assert not any('"spinning" is blocked' in c
                   for c in likely_causes(sampled.res.stderr))


def test_lock_wait_named_from_native_frames(sampled):
    """A thread blocked on a mutex taken in C (through ctypes), which no
    Python lock stands for: stuck all along, and the cause names the C
    function its native frames show, not a guess."""
    locked = sampled_thread(sampled, "c-locked")
    assert locked["state"] == "stuck", locked
    assert locked["stuck_for"] >= SAMPLE_WINDOW - 0.01, locked
    tid = sampled.pids["tids"]["c-locked"]
    causes = likely_causes(sampled.res.stderr)
    at = [i for i, c in enumerate(causes)
          if 'thread %d "c-locked" is blocked acquiring a lock' % tid in c]
    assert at, sampled.res
    cause = causes[at[0]]
    assert ", in C: " in cause and "(stuck for at least" in cause, cause
    assert causes[at[0] + 1].strip() == (
        "at %s:%d in c_locked: libc.pthread_mutex_lock(mutex)  "
        "# MARK: c-lock-twice" % (sampled.script, marker_line(
            sampled.script, "c-lock-twice"))), causes
    function = cause.split(", in C: ", 1)[1].split("()", 1)[0]
    thread = [t for t in sampled.proc["threads"] if t["tid"] == tid][0]
    assert thread["blocked_in"] == "lock", thread
    native = [f["function"] for f in thread["frames"]
              if f["kind"] == "native"]
    assert function in native, (function, native)
    kinds = {c["kind"] for c in sampled.report["causes"]}
    assert "lock" in kinds and "busy" in kinds, sampled.report["causes"]


def test_python_lock_wait_said_once(sampled):
    """A thread blocked on a threading.Lock (its own, taken twice): the
    wait-for graph names the lock, with the thread's line and how long
    it has been stuck; no second, vaguer "blocked acquiring a lock"
    cause from its native frames says it again."""
    tid = sampled.pids["tids"]["locked"]
    line = marker_line(sampled.script, "lock-twice")
    causes = likely_causes(sampled.res.stderr)
    # (nor one "possible deadlock" of it and the C mutex's thread)
    assert len([c for c in causes if "thread %d " % tid in c]) == 1, causes
    assert "possible deadlock" not in sampled.res.stderr, causes
    heads = [i for i, c in enumerate(causes)
             if re.match(r"  process \d+: 1 waiting on threading\.Lock 0x"
                         r"[0-9a-f]+ \(locked\), holder unknown$", c)]
    assert len(heads) == 1, causes
    assert re.match(r"thread %d \(locked\) at run_sampled\.py:%d in locked "
                    r"\(stuck for at least [0-9.]+s\): lock\.acquire\(\)"
                    % (tid, line), causes[heads[0] + 1].strip()), causes
    held = [c for c in sampled.report["causes"] if c["kind"] == "held" and
            "threading.Lock" in c["summary"]]
    assert len(held) == 1, sampled.report["causes"]


def test_sample_last_zero_samples_nothing(work):
    py = CORE[0]
    ready = work / "ready.json"
    report_file = work / "report.json"
    res = coroscope_run(["--timeout", "2", "--sample-last", "0",
                         "--report", report_file, "--", py.path,
                         target_script("run_sampled.py"), ready])
    assert res.returncode == 124, res
    pids = read_json(ready, "ready file")
    proc = process_of(read_json(report_file, "--report file"), pids["pid"])
    assert "sampling" not in proc, proc
    assert "coroscope: sampled over" not in res.stderr, res
    # without samples, nothing is called busy
    assert not any("is busy" in c for c in likely_causes(res.stderr)), res



# ---------------------------------------------------------------------------
# Causes ranked by everything blocked behind an object, not only its
# direct waiters

@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_longest_chain_ranks_first(py, work):
    script = target_script("run_chain.py")
    ready = work / "ready"
    res = coroscope_run(["--timeout", "2", "--", py.path, script, ready])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    lock = [i for i, c in enumerate(heads) if "waiting on asyncio.Lock" in c]
    event = [i for i, c in enumerate(heads)
             if "2 waiting on asyncio.Event" in c]
    assert lock and event, causes
    # one direct waiter, but its three parents wait behind it too
    assert lock[0] < event[0], causes
    assert heads[lock[0]].split(": ", 1)[1].startswith(
        "1 waiting on asyncio.Lock"), causes
    assert heads[lock[0]].endswith("; 4 blocked behind it in all"), causes
    assert "blocked behind" not in heads[event[0]], causes
    assert ("run_chain.py:%d in holder" % marker_line(script, "chain-holder")
            in heads[lock[0]]), causes


# ---------------------------------------------------------------------------
# A task parked on a future nothing sets, holding up its parent

# A task is called stuck only once the samples saw it parked.  Once, in
# the sanitizer run beside two more workers, the causes came out empty
# after two seconds (not seen again, even with three CPU hogs beside it):
# a second more for a slow start, and the report in the message.
STUCK_TIMEOUT = "3"


def run_stuck_task(py, work, *args):
    """run_stuck_task.py ARGS under `coroscope run` until its timeout:
    the script, and the likely causes with the lines of those naming a
    stuck task."""
    script = target_script("run_stuck_task.py")
    res = coroscope_run(["--timeout", STUCK_TIMEOUT, "--", py.path, script,
                         str(work / "ready")] + list(args))
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    stuck = [i for i, c in enumerate(causes) if "stuck task:" in c]
    assert stuck, res.stderr[:4000]
    return script, causes, stuck


@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_stuck_task_leads_the_causes(py, work):
    script, causes, at = run_stuck_task(py, work)
    stuck = [causes[i] for i in at]
    # the leaf ranked first, blocking its parent and main() (the task
    # run_until_complete made) behind it; the sleeper not at all
    assert "stuck_leaf waits on Future" in stuck[0], causes
    assert "blocking 2 other tasks" in stuck[0], causes
    assert not any("napper" in c for c in stuck), causes
    line = marker_line(script, "stuck-leaf")
    assert any("run_stuck_task.py:%d" % line in c for c in causes), causes


@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_stuck_task_after_those_the_graph_explains(py, work):
    """Three tasks waiting on asyncio.Events rank before the leaf (each
    holds up more tasks): the graph explains them, so they take none of
    the three "stuck task" places, and the leaf still has its cause."""
    script, causes, at = run_stuck_task(py, work, "3")
    stuck = [causes[i] for i in at]
    assert len(stuck) == 1, causes
    assert "stuck_leaf waits on Future" in stuck[0], causes
    assert not any("more stuck task" in c for c in causes), causes
    events = [c for c in causes if "waiting on asyncio.Event" in c]
    assert len(events) == 3, causes
    line = marker_line(script, "on-event")
    assert all(any("run_stuck_task.py:%d" % line in d for d in
                   causes[causes.index(e):causes.index(e) + 3])
               for e in events), causes


@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_stuck_task_on_a_gather(py, work):
    """A task awaiting asyncio.gather() of a future nothing sets: the
    graph records the wait but names no cause for a gather, so the task
    keeps its "stuck task" cause."""
    script, causes, at = run_stuck_task(py, work, "0", "gather")
    stuck = [causes[i] for i in at]
    assert len(stuck) == 1, causes
    assert "stuck_leaf waits on _GatheringFuture" in stuck[0], causes
    line = marker_line(script, "stuck-gather")
    assert any("run_stuck_task.py:%d" % line in c for c in causes), causes


@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_stuck_task_says_when_its_timeout_ends_the_wait(py, work):
    """A task parked under asyncio.wait_for(fut, 600) (before 3.12 on
    the future wait_for() awaits, its timer's _release_waiter; from 3.12
    under a Timeout): its cause says when the timeout ends the wait,
    counted from the stop, which came after `run`'s 3 s and before it
    returned.  Before, only that it was stuck."""
    start = time.monotonic()
    script, causes, at = run_stuck_task(py, work, "0", "timeout")
    end = time.monotonic()
    # (the loop's time the wait ends at, a moment before the timer's)
    ends = float((work / "ready").read_text())
    stuck = [causes[i] for i in at if "stuck_leaf" in causes[i]]
    assert len(stuck) == 1, causes
    m = re.search(r"stuck task: stuck_leaf waits on \S+ 0x[0-9a-f]+"
                  r"(?:, stuck for at least [0-9.]+s)?"
                  r"(?:, blocking \d+ other tasks?)?"
                  r", times out in ([0-9.]+)s$", stuck[0])
    assert m, causes
    # (tenths rounded; the timer set up to 0.2 s after `ends`)
    assert ends - end - 0.05 <= float(m.group(1)) <= \
        ends + 0.25 - (start + float(STUCK_TIMEOUT)), (ends - start, causes)
    line = marker_line(script, "stuck-timeout")
    assert "run_stuck_task.py:%d" % line in causes[at[0] + 1], causes
    # three alike, waiting 1, 2 and 3 s longer: one cause, their range
    alike = [c for c in causes if "stuck tasks wait" in c]
    assert len(alike) == 1, causes
    m = re.search(r"3 stuck tasks wait on \S+, .*time out in ([0-9.]+)s "
                  r"\.\. ([0-9.]+)s: \"alike-1\", \"alike-2\", "
                  r"\"alike-3\"$",
                  alike[0])
    assert m, causes
    assert 1.9 <= float(m.group(2)) - float(m.group(1)) <= 2.1, causes


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_stuck_task_at_its_own_line(ident, work):
    """A task parked in a library's coroutine (asyncio's streams.py,
    under `await reader.read()`): its cause gives the program's own line
    first, the library's innermost after it, as the sampled lines do.
    Before, only the library's line (streams.py:522).  The cause is the
    StreamReader's (tests/test_run_reads.py): it names the socket, then
    the task."""
    py = interpreter_or_skip(ident)
    script = target_script("run_stuck_task.py")
    res = coroscope_run(["--timeout", STUCK_TIMEOUT, "--", py.path, script,
                         str(work / "ready"), "0", "read"])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    at = [i for i, c in enumerate(causes)
          if ": 1 waiting on asyncio.StreamReader 0x" in c]
    assert len(at) == 1 and at[0] + 2 < len(causes), causes
    assert re.match(r"^ +fd \d+: a Unix socket$", causes[at[0] + 1]), causes
    line = marker_line(script, "stuck-read")
    assert re.match(r"^ +task 'stuck_leaf' at \S*run_stuck_task\.py:%d in "
                    r"stuck_leaf \(innermost \S*streams\.py:\d+ "
                    r"in \S*_wait_for_data\) " % line,
                    causes[at[0] + 2]), causes


@pytest.mark.parametrize("py", CORE, ids=[i.id for i in CORE])
def test_stuck_task_names_its_jobs_thread(py, work):
    """A task awaiting run_in_executor() of a job that never returns: its
    cause names the worker thread running the job and the job's line --
    one that sleeps, and one blocked on a lock, whose cause names the
    thread and not the task waiting for it."""
    ready = work / "ready"
    script = target_script("run_executor.py")
    res = coroscope_run(["--timeout", "3", "--", py.path, script,
                         str(ready)])
    assert res.returncode == 124, res
    info = read_json(ready, "ready file")
    causes = likely_causes(res.stderr)
    for task, await_marker, job, job_marker in (
            ("offload", "await-sleep", "sleeper", "job-sleep"),
            ("locked-offload", "await-lock", "locker", "job-lock")):
        at = marker_line(script, await_marker)
        stuck = [i for i, c in enumerate(causes)
                 if "stuck task:" in c and i + 2 < len(causes) and
                 "run_executor.py:%d in " % at in causes[i + 1]]
        assert len(stuck) == 1, (task, causes)
        assert re.match(r'^ +its job runs in thread %d "[^"]*" at \S*'
                        r'run_executor.py:%d in %s(, in C: \S+\(\))?$'
                        % (info["tids"][job], marker_line(script, job_marker),
                           job), causes[stuck[0] + 2]), causes
    lock = [i for i, c in enumerate(causes)
            if "waiting on threading.Lock" in c]
    assert len(lock) == 1, causes
    assert re.match(r"^ +thread %d \(" % info["tids"]["locker"],
                    causes[lock[0] + 1]), causes


# ---------------------------------------------------------------------------
# A thread pool parked in one place: one line in each section of the
# report, not one per worker (--all: one per worker)

ALIKE_POOL = 12


def seen_lines(stderr, pid):
    """The 'stuck or busy' lines of process pid."""
    lines = stderr.splitlines()
    start = [i for i, l in enumerate(lines)
             if l.startswith("coroscope: sampled over")]
    assert start, stderr
    out = []
    for line in lines[start[0] + 1:]:
        if not line.startswith("  "):
            break
        if line.startswith("  process %d: " % pid):
            out.append(line[len("  process %d: " % pid):])
    return out


def escaped(name):
    return name.replace("\n", "\\n").replace("\x1b", "\\x1b")


# --all on one interpreter: it changes only how lines are grouped.
ALIKE_RUNS = [(p, None) for p in SAMPLED] + [(p, "--all") for p in SAMPLED[:1]]


@pytest.mark.parametrize("py,option", ALIKE_RUNS,
                         ids=["%s-%s" % (p.id, o) for p, o in ALIKE_RUNS])
def test_alike_threads_one_line(py, option, work):
    script = target_script("alike_threads.py")
    ready = work / "ready.json"
    report_file = work / "report.json"
    res = coroscope_run(["--timeout", "4", "--report", report_file] +
                        ([option] if option else []) +
                        ["--", py.path, script, ready, ALIKE_POOL])
    pids = read_json(ready, "ready file")
    pid = pids["pid"]
    assert res.returncode == 124, res
    assert "\x1b" not in res.stderr, res
    check_report_names(read_json(report_file, "--report file"), pids)
    pool = dict((tid, name) for name, tid in pids["threads"].items()
                if name.startswith("pool-"))
    pair = [tid for name, tid in pids["threads"].items()
            if name.startswith("pair-")]
    pool_line = marker_line(script, "pool-wait")
    group = re.compile(r"^(\d+) threads (.*): (.*) and (\d+) more$")
    quoted = re.compile(r'^(\d+)(?: "((?:[^"\\]|\\.)*)")?$')

    def check_group(line, member):
        """line counts the whole pool, names 5 of it (escaped) last;
        returns what it says of them."""
        m = group.match(line)
        assert m and int(m.group(1)) == ALIKE_POOL and \
            int(m.group(4)) == ALIKE_POOL - 5, line
        named = [member.match(x) for x in m.group(3).split(", ")]
        assert len(named) == 5 and all(named), line
        for x in named:
            assert int(x.group(1)) in pool, line
            assert x.group(2) == escaped(pool[int(x.group(1))]), line
        return m.group(2)

    # the sampled section: one line for the pool, one each for the pair
    seen = seen_lines(res.stderr, pid)
    pool_seen = [l for l in seen
                 if "alike_threads.py:%d in pool_worker" % pool_line in l]
    for tid in pair:
        assert len([l for l in seen
                    if l.startswith("thread %d " % tid)]) == 1, seen
    causes = likely_causes(res.stderr)
    # (before 3.11 code objects have no qualified name: "wait")
    waits = [c for c in causes
             if re.search(r" waits? in (Event\.)?wait \(threading", c)]
    held = [c for c in causes if c.startswith("      ") and
            "in pool_worker" in c and
            not c.startswith("      called at ")]
    if option:
        assert len(pool_seen) == ALIKE_POOL, seen
        assert sorted(int(l.split()[1]) for l in pool_seen) == \
            sorted(pool), seen
        assert not any(re.search(r"\b\d+ threads ", c) for c in causes), \
            causes
        assert len(held) == ALIKE_POOL, causes
        return
    assert len(pool_seen) == 1, seen
    what = check_group(pool_seen[0], quoted)
    assert what.startswith("stuck for "), pool_seen
    # the causes: the Event's, naming every waiter once (no "waits in
    # Event.wait" cause of their own besides), the pool on one detail
    # line with its line's source, as the graph names threads: 12 (name)
    assert not waits, causes
    assert len(held) == 1, causes
    what = check_group(held[0].strip(), re.compile(
        r'^(\d+)(?: \(((?:[^()\\]|\\.)*)\))?$'))
    assert what.startswith("at alike_threads.py:%d in pool_worker"
                           % pool_line), held
    assert what.endswith(": never.wait()  # MARK: pool-wait"), held


def check_report_names(report, pids):
    """The JSON report holds the pool's names as the target set them, in
    the Event's cause (made from the wait-for graph): JSON escapes them,
    once.  (Until 2026-12-02 the graph's
    causes held them escaped for text as well: "pool-0\\n".)"""
    names = [n for n in pids["threads"] if n.startswith("pool-")]
    assert all("\n" in n and "\x1b" in n for n in names), names
    held = [c for c in report["causes"] if c["kind"] == "held"]
    # (the threads the Event's cause names have no wait cause besides)
    waits = [c for c in report["causes"] if c["kind"] == "wait"]
    assert held and not waits, report["causes"]
    for causes in (held,):
        text = "\n".join(c["summary"] + "\n" + "\n".join(c["details"])
                         for c in causes)
        assert any(n in text for n in names), causes
        assert not any(n.replace("\n", "\\n").replace("\x1b", "\\x1b")
                       in text for n in names), causes


@pytest.mark.parametrize("py,option", ALIKE_RUNS,
                         ids=["%s-%s" % (p.id, o) for p, o in ALIKE_RUNS])
def test_alike_generators_one_line(py, option, work):
    """alike_cms.py's threads, each having entered held() by hand: the 6
    suspended context-manager generators share one line of the samples,
    by address (--all: a line each, 17 lines in all, under the cap of
    20); the two of kept() a line each.  The --report file's sampling
    lists each generator too, stuck, by address."""
    script = target_script("alike_cms.py")
    ready = work / "ready.json"
    report_file = work / "report.json"
    res = coroscope_run(["--timeout", "4", "--report", report_file] +
                        ([option] if option else []) +
                        ["--", py.path, script, ready, "6"])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    sampled = process_of(read_json(report_file, "--report file"),
                         info["pid"])["sampling"]
    for name, addrs in info["generators"].items():
        items = [g for g in sampled["generators"] if g["name"] == name]
        assert sorted(g["address"] for g in items) == sorted(addrs), \
            (name, sampled["generators"])
        assert all(g["kind"] == "generator" and g["state"] == "stuck"
                   for g in items), items
    assert sampled["greenlets"] == [], sampled
    seen = seen_lines(res.stderr, info["pid"])
    gens = info["generators"]
    place = {}
    for name in ("held", "kept"):
        place[name] = "alike_cms.py:%d in %s" % (
            marker_line(script, name + "-yield"), name)
        assert len(gens[name]) == (6 if name == "held" else 2), gens

    def one_each(name):
        """The lines of name's generators, one each: their addresses."""
        one = re.compile(r'^generator "%s" \((0x[0-9a-f]+)\) stuck for '
                         r'at least [0-9.]+s at \S*%s$'
                         % (name, re.escape(place[name])))
        lines = [l for l in seen if place[name] in l]
        return sorted(one.match(l).group(1) if one.match(l) else l
                      for l in lines)

    # two alike stay apart
    assert one_each("kept") == sorted(gens["kept"]), seen
    if option:
        assert one_each("held") == sorted(gens["held"]), seen
        return
    held = [l for l in seen if place["held"] in l]
    assert len(held) == 1, seen
    m = re.match(r'^6 generators "held" stuck for at least [0-9.]+s at '
                 r'\S*%s: (.*) and 1 more$' % re.escape(place["held"]),
                 held[0])
    assert m, held
    named = m.group(1).split(", ")
    assert len(named) == 5 and set(named) <= set(gens["held"]), held


# Where trio is installed: Debian's package, pyenv's 3.11.
WITH_TRIO = interpreters_importing(("3.11-debian", "3.11"), "trio")


@pytest.mark.skipif(not WITH_TRIO, reason="no interpreter here has trio "
                    "(3.11-debian, 3.11), or COROSCOPE_TEST_PYTHONS left "
                    "them out")
@pytest.mark.parametrize("py", WITH_TRIO, ids=[i.id for i in WITH_TRIO])
def test_alike_tasks_of_two_frameworks_apart(py, work):
    """alike_mixed.py parks 4 asyncio and 4 trio tasks at one line: two
    lines in the samples, "4 tasks" and "4 trio tasks" (as watch says),
    not one of 8; and two likely causes, one a framework, each naming its
    four (trio's were three causes of one task each, the fourth unsaid).
    """
    script = target_script("alike_mixed.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script, ready,
                         "4"])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    seen = seen_lines(res.stderr, info["pid"])
    place = "alike_mixed.py:%d in parked_at" % marker_line(script,
                                                           "mixed-await")
    lines = sorted(l for l in seen if place in l)
    assert len(lines) == 2, seen
    for line, kind, names in zip(lines, ("", "trio "),
                                 (info["asyncio"], info["trio"])):
        m = re.match(r'^4 %stasks stuck for at least [0-9.]+s at \S*%s\b.*'
                     r': ("[^"]*"(, "[^"]*")*)$' % (kind, re.escape(place)),
                     line)
        assert m, (kind, lines)
        assert sorted(m.group(1).split(", ")) == sorted(
            '"%s"' % n for n in names), (kind, lines)
    causes = likely_causes(res.stderr)
    stuck = [c for c in causes if "stuck" in c and " task" in c]
    assert len(stuck) == 2, causes
    prefix = "  process %d: " % info["pid"]
    for head, names in (
            (r"4 stuck tasks wait on Future, stuck for at least [0-9.]+s, "
             r"blocking 1 other task each", info["asyncio"]),
            # the four block their nursery's task and trio's root task
            (r"4 stuck trio tasks parked in sleep_forever, stuck for at "
             r"least [0-9.]+s, blocking 2 other tasks", info["trio"])):
        lines = [c for c in stuck if re.match(re.escape(prefix) + head, c)]
        assert len(lines) == 1, (head, causes)
        got = lines[0].split(": ", 2)[2]
        assert sorted(got.split(", ")) == sorted('"%s"' % n for n in names), \
            (names, causes)
        where = causes[causes.index(lines[0]) + 1]
        assert where.strip().startswith("tasks at ") and \
            where.endswith(place), causes


@pytest.mark.skipif(not WITH_TRIO, reason="no interpreter here has trio "
                    "(3.11-debian, 3.11), or COROSCOPE_TEST_PYTHONS left "
                    "them out")
@pytest.mark.parametrize("py", WITH_TRIO, ids=[i.id for i in WITH_TRIO])
def test_trio_machinery_idle(py, work):
    """trio's init task, the task running run_sync_soon() callbacks and
    the generator of trio's run loop are parked in every trio program:
    counted on the idle line, not listed as stuck beside the program's
    tasks (before, three "stuck" lines in every run of a trio program).
    The report's sampled tasks say what they are; the program's own
    parked tasks are still stuck."""
    script = target_script("alike_mixed.py")
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", "4", "--report", report, "--",
                         py.path, script, ready, "4"])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    seen = seen_lines(res.stderr, info["pid"])
    assert not any("<init>" in l or "run_sync_soon" in l or
                   "unrolled_run" in l for l in seen), seen
    # (a site module may keep an as_file() open too: certifi's, on a
    # machine whose site runs it at startup.  The kinds come in the order
    # of their items' time parked: an as_file() entered at startup comes
    # first when trio's thread started late, as in a loaded run, once.)
    idle = [re.match(r"(\d+) idle by design, not listed: (.*)$", l)
            for l in seen]
    idle = [m for m in idle if m]
    assert len(idle) == 1, seen
    kinds = dict(re.fullmatch(r"(.*) \((\d+)\)", k).groups()
                 for k in idle[0].group(2).split(", "))
    kinds = dict((k, int(n)) for k, n in kinds.items())
    as_file = kinds.pop("importlib.resources.as_file() kept open", 0)
    assert kinds == {"trio's system task": 2, "trio's run loop": 1} and \
        int(idle[0].group(1)) == 3 + as_file, seen
    proc = process_of(read_json(report, "--report file"), info["pid"])
    tasks = proc["sampling"]["tasks"]
    system = [t for t in tasks if t["idle"] == "trio's system task"]
    assert sorted(t["name"] for t in system) == [
        "<TrioToken.run_sync_soon task>", "<init>"], tasks
    own = [t for t in tasks if t["name"] in info["trio"]]
    assert len(own) == 4 and all(t["state"] == "stuck" and
                                 t["idle"] is None for t in own), own


AS_FILE = [i for i in SAMPLED
           if tuple(int(x) for x in i.version.split(".")[:2]) >= (3, 9)]


@pytest.mark.skipif(not AS_FILE, reason="importlib.resources.as_file() "
                    "needs 3.9+, and no sampled interpreter here has it")
@pytest.mark.parametrize("py", AS_FILE, ids=[i.id for i in AS_FILE])
def test_as_file_kept_open_is_idle(py, work):
    """A module that enters importlib.resources.as_file() at import and
    keeps the path (certifi, in every program using requests) leaves its
    generator at its yield for good: counted on the idle line, not
    listed as a stuck generator at importlib's _common.py (before, one
    such line in every run of such a program).  The program's own
    parked task is still stuck."""
    script = target_script("as_file_kept.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script, ready])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    seen = seen_lines(res.stderr, info["pid"])
    assert not any("_common.py" in l for l in seen), seen
    kept = [re.search(r"importlib\.resources\.as_file\(\) kept open "
                      r"\((\d+)\)", l) for l in seen]
    kept = [m for m in kept if m]
    # the target's two; a site module may enter more (certifi's)
    assert len(kept) == 1 and int(kept[0].group(1)) >= 2, seen
    place = "as_file_kept.py:%d in parked" % marker_line(script,
                                                         "kept-parked")
    own = [l for l in seen if place in l]
    assert len(own) == 1 and own[0].startswith(
        'task "%s" stuck for ' % info["task"]), seen


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_idle_executor_worker_is_no_cause(ident, work):
    """An executor's worker waiting for work waits in its queue's get():
    on 3.6 a queue.Queue, whose wait the wait-for graph sees.  That
    wait is no cause at all (it was the first cause once, then an idle
    one): only a library's threads waiting for work wait on the queue,
    and the samples count them apart; the worker stuck in a job is a
    cause.
    3.6's types module keeps a never-started async generator: counted
    idle by design, not listed stuck."""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path,
                         target_script("idle_workers.py"), ready])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    assert not any("queue.Queue" in c for c in heads), causes
    seen = seen_lines(res.stderr, info["pid"])
    assert not any("types.py" in l for l in seen), seen
    idle = [l for l in seen if "idle by design" in l]
    assert len(idle) == 1 and "an executor's worker thread (1)" in idle[0], \
        seen
    if ident == "3.6":
        assert "the types module's own async generator (1)" in idle[0], \
            seen


@pytest.mark.parametrize("py", SAMPLED, ids=[i.id for i in SAMPLED])
def test_alike_tasks_one_line(py, work):
    """alike_target.py parks 4 tasks at each of two lines of one
    coroutine and 8 in two code objects compiled from one text, all on
    one asyncio.Event: three lines in the samples and three among the
    Event's waiters, as the dump groups them."""
    script = target_script("alike_target.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script, ready,
                         "4"])
    pid = read_json(ready, "ready file")["pid"]
    assert res.returncode == 124, res
    seen = seen_lines(res.stderr, pid)
    causes = likely_causes(res.stderr)
    at = dict((mark, "alike_target.py:%d in parked_at"
               % marker_line(script, mark)) for mark in ("alike-a",
                                                         "alike-b"))
    task = r'"Task-\d+"'
    for mark, place in at.items():
        lines = [l for l in seen if place in l]
        assert len(lines) == 1, (mark, seen)
        assert re.match(r"^4 tasks stuck for .*: %s(, %s){3}$"
                        % (task, task), lines[0]), lines
        held = [c for c in causes if c.startswith("      4 tasks at ") and
                place in c]
        assert len(held) == 1, (mark, causes)
        assert re.search(r": 'Task-\d+'(, 'Task-\d+'){3}$", held[0]), held
    twins = [l for l in seen if l.startswith("8 tasks stuck for ")]
    assert len(twins) == 1, seen
    assert re.search(r": %s(, %s){4} and 3 more$" % (task, task),
                     twins[0]), twins
    twin_causes = [c for c in causes if c.startswith("      8 tasks at ")]
    assert len(twin_causes) == 1, causes
    # The eight were made one after another, so their names count up
    # from one number: the five named are the first five, in order (as
    # the dump's "Task-10 .. Task-17"), whatever order the heap walk
    # found them in.
    for line, quote in ((twins[0], '"'), (twin_causes[0], "'")):
        named = [int(n) for n in re.findall(r"%sTask-(\d+)%s" % (quote, quote),
                                            line)]
        assert named == list(range(named[0], named[0] + 5)), line
    # none of the 16 has a line of its own
    assert not [l for l in seen if l.startswith("task ") and
                "parked_at" in l], seen


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


# An event loop blocked inside a task's step (where a running task and
# its thread are read differs: 3.6, 3.11, 3.13's, 3.14t's)
BLOCKED_IDS = ("3.6", "3.11-debian", "3.13", "3.14t")
# The blocked thread is stuck once the samples saw it in its sleep for
# half the window (the last half of the timeout).  With 3 s, 3.14t beside
# three more workers once started its loop 1.9 s in and was still called
# moving at the timeout: 5 s leaves 3.4 s for the start.
BLOCKED_TIMEOUT = "5"


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_a_thread_busy_then_parked_is_not_busy(ident, work):
    """A thread that computed for 4.6 s of a 6 s timeout (half of the
    sampled part), then parked on an Event nothing sets
    (targets/run_spin_then_parked.py), less than the stuck threshold
    (1.5 s) before the dump: its share of a CPU over the samples is a
    half, but it has not run at the last samples.  Not busy: before, the
    one cause was "thread N "MainThread" is busy, 52% of a CPU at
    run_spin_then_parked.py:N in <module>", the line it is parked at.
    (Python's start comes before the 4.6 s: up to 0.6 s of it leaves two
    samples after the park.)"""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", "6", "--report", report, "--",
                         py.path, target_script("run_spin_then_parked.py"),
                         ready, "4.6"])
    assert res.returncode == 124, res
    pid = json.loads(ready.read_text())["pid"]
    assert not [c for c in likely_causes(res.stderr) if "busy" in c], \
        res.stderr[:4000]
    # nothing listed, and how long it takes to be (a hang too young);
    # 3.6's section has a line of what is idle by design instead
    if "idle by design" not in res.stderr:
        assert "\n  nothing: no task or thread was seen stuck (still for " \
            "1.5s, half that time, or more) or busy\n" in res.stderr, \
            res.stderr[:4000]
    doc = json.loads(report.read_text())
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    threads = [t for t in proc["sampling"]["threads"] if t["tid"] == pid]
    assert len(threads) == 1, proc["sampling"]
    assert threads[0]["state"] != "busy", threads
    # (it was busy in the samples' first part: the test can fail)
    assert threads[0]["busy"] >= 0.05, threads


@pytest.mark.parametrize("ident", BLOCKED_IDS)
def test_blocked_loop_leads_the_causes(ident, work):
    """time.sleep() inside a coroutine: its thread never goes back to
    the loop, so the loop's other tasks (a queue's consumer among them)
    are parked through no fault of theirs.  The first cause names the
    thread, the task and its line; before, the consumer's queue was the
    only cause."""
    py = interpreter_or_skip(ident)
    ready = str(work / "ready")
    script = target_script("run_blocked_loop.py")
    res = coroscope_run(["--timeout", BLOCKED_TIMEOUT, "--report",
                         str(work / "report.json"), "--", py.path, script,
                         ready])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    assert causes and "event loop blocked: thread " in causes[0], \
        res.stderr[:4000]
    assert "runs task 'blocker' and has not gone back to its loop " \
        "(stuck for at least" in causes[0], causes
    assert "4 other tasks of the loop cannot run" in causes[0], causes
    line = marker_line(script, "blocked-sleep")
    assert "run_blocked_loop.py:%d in blocker: time.sleep(3600)" % line \
        in causes[1], causes
    # when the sleep ends, said here; no sleep cause of its own besides
    # (before, "thread N "MainThread" sleeps in time.sleep, wakes in
    # 3596.8s (stuck for ...)" next, at the same line)
    assert re.search(r", sleeps in time\.sleep, wakes in \d+\.\ds$",
                     causes[1]), causes
    assert not [c for c in causes if re.match(
        r"  process \d+: thread \d+ \S+ sleeps in time\.sleep", c)], causes
    with open(str(work / "report.json")) as f:
        report = json.load(f)
    assert [c["kind"] for c in report["causes"]][:1] == ["loop_blocked"], \
        report["causes"]


# Test aid: the samples' probe watches no running step (as when a
# loaded machine lets no turn of the loop fall between its reads), so
# the samples alone must tell a turning loop from a blocked one.
NO_STEP_PROBE = {"COROSCOPE_TEST_NO_STEP_PROBE": "1"}


def blocked_loop(work, how, py=None, env=None):
    """run_blocked_loop.py's way `how` under `run` on py (the control
    interpreter by default) until it times out: the script, the Run,
    the causes."""
    py = py or control_interpreter()
    script = target_script("run_blocked_loop.py")
    res = coroscope_run(["--timeout", BLOCKED_TIMEOUT, "--", py.path, script,
                         str(work / "ready"), how], env=env)
    assert res.returncode == 124, res
    return script, res, likely_causes(res.stderr)


def blocked_loop_on(ident, how):
    """The interpreter of ident and run_blocked_loop.py's way `how` for
    it: ident "uvloop" is Debian's 3.11 on uvloop's loop."""
    if ident != "uvloop":
        return interpreter_or_skip(ident), how
    if not WITH_UVLOOP:
        pytest.skip("uvloop is not installed for Debian's 3.11 here, "
                    "or COROSCOPE_TEST_PYTHONS left it out")
    return WITH_UVLOOP[0], "uvloop-" + how


def assert_polling_blocks(script, res, causes, others, lines):
    """causes[0] says a polling loop blocks the loop of `others` other
    tasks, causes[1] where: at one of the marked lines."""
    assert causes and re.search(
        r"event loop blocked: thread \d+ \S+ runs task 'blocker' and has "
        r"not gone back to its loop \((stuck for at least [0-9.]+s|at that "
        r"line at every sample( but one)?, [0-9.]+s)\); %d other "
        r"tasks of the loop cannot run$" % others, causes[0]), \
        res.stderr[:4000]
    assert any("run_blocked_loop.py:%d in blocker: time.sleep(0.0"
               % marker_line(script, m) in causes[1] for m in lines), causes


def test_blocked_loop_polling(work):
    """A loop of time.sleep(0.01) inside a coroutine, polling for a flag:
    the thread runs between samples, but at one line, and its loop is as
    blocked (before, no cause named the loop)."""
    script, res, causes = blocked_loop(work, "poll")
    assert_polling_blocks(script, res, causes, 4, ["blocked-poll"])


def test_blocked_loop_polling_with_a_wakeup_queued(work):
    """The same, with a task whose future the blocker set before it
    polls: done, but its task is never woken (the wake-up is queued
    behind the blocking step), so it has not moved, and the loop is as
    blocked.  Before, the samples' probe took the done future for a
    wake-up at every sample, the task as moving, the loop as turning,
    and no cause named the loop (the polling test's flake under load,
    where a sleep's timer fired in the turn the loop blocked in)."""
    script, res, causes = blocked_loop(work, "poll-woken")
    assert_polling_blocks(script, res, causes, 5, ["blocked-poll"])


def test_blocked_loop_polling_away_once(work):
    """A polling loop seen once at another line, then back at its own:
    its loop is as blocked.  Before, one sample at
    another line (one in a hundred for a loop whose check is short: the
    polling test's other flake under load) left the loop unnamed."""
    script, res, causes = blocked_loop(work, "poll-away")
    assert_polling_blocks(script, res, causes, 4, ["blocked-poll-back"])


def test_loop_turning_between_blocking_calls(work):
    """A step that sleeps 50 ms then awaits: at the same line at every
    sample, but the loop's other tasks run between (the ticker, the
    producer): not a blocked loop."""
    script, res, causes = blocked_loop(work, "yields")
    assert not any("event loop blocked" in c for c in causes), \
        res.stderr[:4000]


@pytest.mark.parametrize("probe", ["probe", "no-step-probe"])
def test_blocked_loop_busy(work, probe):
    """A step that computes for ever: its thread busy, its loop
    blocked; the same by the samples alone (uvloop's: the polling test
    with a check that waits)."""
    script, res, causes = blocked_loop(
        work, "spin", env=NO_STEP_PROBE if probe != "probe" else None)
    assert causes and re.search(
        r"event loop blocked: thread \d+ \S+ runs task 'blocker' and has "
        r"not gone back to its loop \(busy, [0-9]+% of a CPU\); 4 other "
        r"tasks of the loop cannot run$", causes[0]), res.stderr[:4000]
    assert "run_blocked_loop.py:%d in blocker" % marker_line(
        script, "blocked-spin") in causes[1], causes


def test_busy_loop_of_short_steps_is_not_blocked(work):
    """One short task after another, each computing 20 ms in one step:
    the loop's thread is busy and runs a task's step at every sample,
    but a new task's each time.  Before, the step running at the dump
    made an "event loop blocked" cause (a busy asyncio server's, its
    handlers caught in their steps, in one run of four)."""
    script, res, causes = blocked_loop(work, "churn")
    assert not any("event loop blocked" in c for c in causes), \
        res.stderr[:4000]
    assert any(re.search(r"thread \d+ \S+ is busy, [0-9]+% of a CPU", c)
               for c in causes), res.stderr[:4000]


# (the suite's time: the readers of the mark differ by 3.6's and 3.14t's
# layouts and uvloop's C loop; the rest is version-free)
@pytest.mark.parametrize("ident,how", [
    ("3.6", "crunch-yields"), ("3.14t", "crunch-yields"),
    ("uvloop", "crunch-yields"), ("3.11-debian", "crunch-bursts")])
def test_busy_task_yielding_alone_is_no_blocked_loop(ident, how, work):
    """One task computing for 5 ms between awaits of asyncio.sleep(0),
    no other task of its loop moving, and the samples' probe of the
    running step off: the thread is busy and runs that task's step at
    nearly every sample, yet the loop turns: its ready queue's left end
    moves between samples.  Before, the samples could not tell it from
    a step that never ends: "event loop blocked" (the probe alone told
    them apart, when it caught a turn: under load, never).  uvloop's
    queue is a field of its C loop, found as the object's one deque.
    With crunch-bursts, 100 ms of computing then 32 turns: the queue's
    left end (the first mark) was back in its place at every sample."""
    py, how = blocked_loop_on(ident, how)
    script, res, causes = blocked_loop(work, how, py=py, env=NO_STEP_PROBE)
    assert not any("event loop blocked" in c for c in causes), \
        res.stderr[:4000]
    # (the target ran: its thread busy; where the dump caught it, in
    # the blocker's step or, between two, in the selector, varies)
    assert any(re.search(r"thread \d+ \S+ is busy, [0-9]+% of a CPU at ", c)
               for c in causes), res.stderr[:4000]


@pytest.mark.parametrize("ident", ("3.6", "3.14t", "uvloop"))
def test_blocked_loop_polling_with_a_check_that_waits(ident, work):
    """A poll inside a task's step whose check is a function of the
    program's own waiting 10 ms in select(), then time.sleep(0.01): the
    thread runs, little, and the samples find it at either line, so it
    is neither stuck, busy nor at one line.  But it runs that one step
    at every sample while its loop runs no callback (its ready queue's
    count stays), and that is a blocked loop.  Before, no cause."""
    py, how = blocked_loop_on(ident, "poll-check-waits")
    script, res, causes = blocked_loop(work, how, py=py)
    # (all nine samples at one of its two lines, one time in 250: then
    # it polls at that line; or, the step begun during the samples on a
    # loaded machine, at that line since it came there: a clean clone's
    # check on uvloop, once)
    assert causes and re.search(
        r"event loop blocked: thread \d+ \S+ runs task 'blocker' and has "
        r"not gone back to its loop \((in that step at every sample, "
        r"[0-9.]+s, its loop running nothing|at that line at every "
        r"sample( but one| since it came there)?, [0-9.]+s)\); 4 other "
        r"tasks of the loop cannot run$", causes[0]), res.stderr[:4000]
    assert any("run_blocked_loop.py:%d in %s: " % (
        marker_line(script, m), f) in causes[1] for m, f in (
            ("blocked-poll-sleep", "blocker"),
            ("blocked-poll-check", "check_waits"))), causes


def test_young_loop_threads_are_no_blocked_loop(work):
    """Threads started during the samples, each running its own loop
    for a job that goes back to it every 0.6 s: one seen only at the
    last two samples has run one step since its first, 0.3 s, its loop
    running nothing.  Not a blocked loop: one step must have run for
    half the sampled window at least.  Before, two to four "event loop
    blocked" causes for a program making progress.  Nor is any thread
    started during the samples, and watched for less than half their
    window, a cause of any kind: one first seen at the last sample was
    "stuck for at least 0.0s", in its loop's step or its poll's sleep
    (four causes in every run, before)."""
    script, res, causes = blocked_loop(work, "young-loops")
    assert not any("event loop blocked" in c and
                   ("its loop running nothing" in c or
                    "at that line at every sample" in c)
                   for c in causes), res.stderr[:4000]
    assert not any(re.match(r'^  process \d+: .*thread \d+ "Thread-', c)
                   for c in causes), res.stderr[:4000]


def test_blocked_loop_in_a_thread_started_late(work):
    """A thread started during the samples, watched for less than half
    their window, whose loop blocks: young, but seen at three samples or
    more, it is judged as any other (only one seen at the last sample
    and the dump is too young to tell)."""
    assert_late_loop_blocked(*blocked_loop(work, "late-thread"))


def assert_late_loop_blocked(script, res, causes):
    """causes[0] says thread "late-loop" blocks its loop, causes[1] at
    the long sleep's line."""
    assert causes and re.match(
        r'^  process \d+: event loop blocked: thread \d+ "late-loop" runs '
        r"task '\S+' and has not gone back to its loop \(stuck for "
        r"(at least )?[0-9.]+s\); 1 other task of the loop cannot run$",
        causes[0]), res.stderr[:4000]
    assert "run_blocked_loop.py:%d in late_main: time.sleep(3600)" \
        % marker_line(script, "late-sleep") in causes[1], causes


def test_blocked_loop_in_a_thread_started_late_settling(work):
    """The same thread seen at another line first (CI's flake: the
    sample that first saw it caught it on its way): at its sleep for
    less than the stuck threshold, but the sleep ends an hour ahead, so
    it is stuck.  Before, it was "moving", and no cause was named."""
    assert_late_loop_blocked(*blocked_loop(work, "late-thread-settles"))


def test_group_line_ending_in_a_colon(work):
    """Three threads at `with lk:`: their group's detail line quotes
    the line, then names them after " -- " (before, "with lk:: 101
    (w-0), ...")."""
    script = target_script("run_with_line.py")
    res = coroscope_run(["--timeout", BLOCKED_TIMEOUT, "--",
                         control_interpreter().path, script])
    assert res.returncode == 124, res
    line = marker_line(script, "with-line") + 1
    group = [c for c in likely_causes(res.stderr)
             if c.startswith("      3 threads at run_with_line.py:%d in "
                             "worker " % line)]
    assert len(group) == 1, res.stderr[:4000]
    assert re.search(r"\): with lk: -- \d+ \(w-\d\), \d+ \(w-\d\), "
                     r"\d+ \(w-\d\)$", group[0]), group


def test_blocked_loop_in_a_read(work):
    """The same for a blocking recv() in a coroutine (no futex: a
    thread in a read), with the C call it waits in."""
    script, res, causes = blocked_loop(work, "recv")
    assert causes and "event loop blocked: thread " in causes[0], \
        res.stderr[:4000]
    line = marker_line(script, "blocked-recv")
    assert "run_blocked_loop.py:%d in blocker: a.recv(10)" % line \
        in causes[1] and "in C: " in causes[1], causes


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
@pytest.mark.parametrize("mode", ("threads", "tasks"))
def test_the_main_units_wait_comes_first(work, ident, mode):
    """Helpers waiting for work (a consumer in an empty queue's get(),
    a watcher waiting to be told to stop, two worker tasks) wait as
    long as the main thread or main task held up by the hang, and came
    first: on a tie by the graph's order, the workers' queue by its two
    waiters.  What holds up a main unit, whose end the program's waits
    for, comes first now (targets/run_main_first.py)."""
    script = target_script("run_main_first.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "3", "--", py.path,
                                      script, mode])
    thread = mode == "threads"
    assert re.match(r"  process \d+: 1 waiting on %s\.Event 0x[0-9a-f]+ "
                    r"\(not set, 1 waiter\)$"
                    % ("threading" if thread else "asyncio"), causes[0]), \
        causes
    assert re.match(r"      %s at run_main_first\.py:%d in %s "
                    % (r"thread \d+ \(MainThread\)" if thread else
                       r"task '[^']+'",
                       marker_line(script, "main-first-" + mode[:-1]),
                       "threads" if thread else "main"), causes[1]), causes
    assert any(re.match(r"  process \d+: %d waiting on (queue|asyncio)"
                        r"\.Queue " % (1 if thread else 2), c)
               for c in causes[2:]), causes


@pytest.mark.parametrize("code", ("import queue; queue.Queue().get()",
                                  "import threading; "
                                  "threading.Event().wait()"))
def test_an_inline_programs_wait_is_blamed_on_it(work, code):
    """`python -c`: a queue's or an event's waiter at "<string>:1 in
    <module>", the program's line, not at threading.py's
    Condition.wait (a lock's and a sleep's were so already)."""
    _, causes = causes_after_timeout(["--timeout", "2", "--",
                                      control_interpreter().path, "-c", code])
    assert re.match(r"      thread \d+ \(MainThread\) at <string>:1 in "
                    r"<module> \(innermost threading\.py:\d+ in "
                    r"(Condition\.)?wait\)", causes[1]), causes


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_a_process_pool_maps_hung_job_is_named(work, ident):
    """ProcessPoolExecutor.map() with a job that never ends: the main
    thread's wait comes through a generator of process.py's, which hid
    the program's line, and `run` said no likely cause stood out."""
    script = target_script("run_pools.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "4", "--", py.path,
                                      script, "map"])
    assert re.match(r'  process \d+: thread \d+ "MainThread" waits in '
                    r"_chain_from_iterable_of_lists \(process\.py\)",
                    causes[0]), causes
    assert re.match(r"      called at \S*run_pools\.py:%d in <module>"
                    % marker_line(script, "pool-map-wait"), causes[1]), causes
    assert re.match(r"      its job runs in process \d+ at "
                    r"\S*run_pools\.py:%d in sleeps$"
                    % marker_line(script, "pool-map-job"), causes[2]), causes


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_a_pools_lost_job_is_said(work, ident):
    """A multiprocessing.Pool worker that dies running a job (an OOM
    kill) leaves map() waiting for ever, and its cause named only the
    pool's new workers, idle: healthy processes waited on.  It says now
    that none of them runs a job.  (3.14's workers come from its fork
    server.)"""
    script = target_script("run_pools.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "4", "--", py.path,
                                      script, "lost"])
    assert re.match(r"  process \d+: 1 waiting on multiprocessing\.context\."
                    r"\w+Process 0x", causes[0]), causes
    assert causes[1] == ("      none of these workers runs a job at the "
                         "dump: a job may have been lost (a worker killed "
                         "while running one leaves it so; the pool starts "
                         "another)"), causes
    assert re.match(r"      multiprocessing\.pool\.MapResult 0x[0-9a-f]+ "
                    r"\(1 left\) waited on by thread \d+ \(MainThread\) at "
                    r"run_pools\.py:%d in <module>"
                    % marker_line(script, "pool-lost-wait"), causes[2]), \
        causes


@pytest.mark.parametrize("ident", ("3.6", "3.13"))
def test_a_thread_pools_polling_job_is_linked(work, ident):
    """ThreadPoolExecutor.map() with a job polling at one line: the
    worker runs between samples, so no cause of the graph's follows the
    wait to it, and the main thread's wait named no job; the job's poll
    came as a cause of its own, unlinked (3.13, two runs of three).
    The wait names the job's thread now, or the graph's cause does; and
    the job's poll is no cause of its own besides (it was, linked)."""
    script = target_script("run_pools.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "4", "--", py.path,
                                      script, "thread-map"])
    first = causes[:next((k for k, c in enumerate(causes[1:], 1)
                          if c.startswith("  process ")), len(causes))]
    assert any(re.match(r'      (its job runs in|running its job:) thread '
                        r'\d+ "?ThreadPoolExecutor-\d+_\d+"? at '
                        r"\S*run_pools\.py:%d in polls"
                        % marker_line(script, "pool-thread-polls"), c)
               for c in first[1:]), causes
    assert not [c for c in causes if c.startswith("  process ") and
                "ThreadPoolExecutor-" in c], causes


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_a_childs_place_under_the_wait_for_it(work, ident):
    """A parent in subprocess.run(), its child stuck on a lock: the
    parent's cause came first and said only "1 waiting on
    subprocess.Popen ... (pid N)"; where the child is came later, under
    the child's own causes.  The parent's cause says where now."""
    script = target_script("run_child_waits.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "4", "--", py.path,
                                      script])
    m = re.match(r"  process \d+: 1 waiting on subprocess\.Popen 0x[0-9a-f]+ "
                 r"\(pid (\d+)\)$", causes[0])
    assert m, causes
    # (the file's base name, as the parent's own line under it)
    assert causes[1] == ('      child process %s: thread %s "MainThread" at '
                         "run_child_waits.py:%d in <module>"
                         % (m.group(1), m.group(1),
                            marker_line(script, "child-waits"))), causes


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_a_child_joined_before_its_data_is_read(work, ident):
    """The multiprocessing guide's deadlock: the parent joins a child
    whose data it has not read (targets/mp_join_first.py).  Through a
    Queue, the child's exit joins its feeder thread, blocked writing:
    that join was "idle: 1 waiting on threading.Thread" (a feeder thread
    rests by design, but only in its wait for something to send).
    Through a Pipe, the child's place and its write's were the library's
    send, connection.py's; they are the program's line now (a helper's
    user round)."""
    script = target_script("mp_join_first.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "3", "--", py.path,
                                      script, "queue"])
    assert not [c for c in causes if ": idle: " in c], causes
    joins = [c for c in causes if re.match(
        r"  process \d+: 1 waiting on threading\.Thread 0x[0-9a-f]+ for "
        r"thread \d+ \(QueueFeederThread\)", c)]
    assert len(joins) == 1, causes
    assert [c for c in causes if re.match(
        r'  process \d+: thread \d+ "QueueFeederThread" blocked writing to '
        r'fd \d+ at ', c)], causes

    _, causes = causes_after_timeout(["--timeout", "3", "--", py.path,
                                      script, "pipe"])
    send = "mp_join_first.py:%d in to_pipe (innermost connection.py:" \
        % marker_line(script, "send")
    m = re.match(r"  process \d+: 1 waiting on multiprocessing\.\S*Process "
                 r"0x[0-9a-f]+ \(pid (\d+); blocked writing to its fd \d+",
                 causes[0])
    assert m, causes
    assert causes[1].startswith('      child process %s: thread %s '
                                '"MainThread" at %s' % (m.group(1),
                                                        m.group(1), send)), \
        causes
    assert [c for c in causes if c.startswith(
        '  process %s: thread %s "MainThread" blocked writing to fd ' %
        (m.group(1), m.group(1))) and (" at %s" % send) in c], causes


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_tasks_never_started_are_said_so(work, ident):
    """A loop blocked in its first handler's time.sleep() never starts
    the other two (targets/loop_blocks_new_tasks.py): the samples listed
    them "stuck ... at loop_blocks_new_tasks.py:N in handler", their
    def's line, as if they were parked there (a helper's user round).
    They say "(not started)" now; the running one does not."""
    script = target_script("loop_blocks_new_tasks.py")
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script,
                         str(ready)])
    assert res.returncode == 124, res
    pid = json.loads(ready.read_text())["pid"]
    seen = seen_lines(res.stderr, pid)
    tasks = [l for l in seen if l.startswith("task ")]
    defs = [l for l in tasks if "loop_blocks_new_tasks.py:%d in handler"
            % marker_line(script, "handler-def") in l]
    assert len(defs) == 2 and all(
        l.endswith("in handler (not started)") for l in defs), seen
    blocks = [l for l in tasks if "loop_blocks_new_tasks.py:%d in handler"
              % marker_line(script, "blocks") in l]
    assert len(blocks) == 1 and "not started" not in blocks[0], seen


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_a_library_task_names_the_programs_awaiter(work, ident):
    """A stuck task all in a library's code (aiohttp's requests gathered
    from the program's s.get(); asyncio.wait_for() here,
    targets/library_only_task.py) was placed in the library only; the
    program's line came nowhere in its cause (a helper's user round).
    Its cause now names its nearest awaiter in the program's code."""
    script = target_script("library_only_task.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "3", "--", py.path,
                                      script, str(work / "ready.json")])
    at = [i for i, c in enumerate(causes) if ": stuck task: " in c]
    assert len(at) == 1, causes
    assert "in wait_for" in causes[at[0] + 1], causes
    assert re.match(r"^      awaited by task '[^']+' at \S*"
                    r"library_only_task\.py:%d in main$"
                    % marker_line(script, "gathers"), causes[at[0] + 2]), \
        causes


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_join_waiting_for_a_missing_task_done(work, ident):
    """A consumer that skips task_done() on one path: the producer's
    join() never returns (targets/join_without_done.py).  The queue's
    cause said "3 waiting on queue.Queue (qsize 0, 1 unfinished, 3
    waiters)", its idle consumers first (both helpers' user rounds);
    it says what join() waits for and who joins, first."""
    script = target_script("join_without_done.py")
    py = interpreter_or_skip(ident)
    for mode, family, mark in (("threads", "queue.Queue", "join"),
                               ("asyncio", "asyncio.Queue", "ajoin")):
        _, causes = causes_after_timeout(["--timeout", "3", "--", py.path,
                                          script, mode])
        at = [i for i, c in enumerate(causes)
              if re.search(r": 3 waiting on %s 0x[0-9a-f]+ \(qsize 0, 1 "
                           r"unfinished, 3 waiters\)$" % re.escape(family),
                           c)]
        assert len(at) == 1, (mode, causes)
        assert re.match(r"^      join\(\) waits for 1 item a get\(\) took "
                        r"and no task_done\(\) marked: (thread \d+ "
                        r"\(MainThread\)|task '[^']+') at "
                        r"join_without_done\.py:%d in " %
                        marker_line(script, mark), causes[at[0] + 1]), \
            (mode, causes)


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_a_forked_childs_copied_generator_is_not_listed(work, ident):
    """A parent starts a forked child from inside a loop over its own
    generator (targets/fork_in_generator_loop.py): the child holds a
    copy of that generator, suspended as at the fork, which the samples
    listed as stuck in the child (a helper's user round: a process
    pool's map()).  The parent's is listed; the child's, at the same
    address and of the same code, is counted as a copy."""
    script = target_script("fork_in_generator_loop.py")
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, script,
                         str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    gen = "generator \"rows\" (0x%x) stuck for " % info["gen"]
    assert [l for l in seen_lines(res.stderr, info["pid"])
            if l.startswith(gen)], res.stderr[:4000]
    child = seen_lines(res.stderr, info["child"])
    assert not [l for l in child if l.startswith(gen)], child
    assert [l for l in child if "a copy of its parent's, made by the "
            "fork (" in l], child


def test_cross_loop_handlers_said_once(work):
    """Handlers awaiting, through wrap_future(), coroutines another
    loop's thread runs (run_coroutine_threadsafe()) that wait on a lock
    and an Event there: the graph's causes name the other loop's tasks,
    and the handlers are not "stuck task" causes of their own as well
    (before, each was, "waits on Future", said twice)."""
    script = target_script("threadsafe_cross_loop.py")
    res = coroscope_run(["--timeout", BLOCKED_TIMEOUT, "--",
                         control_interpreter().path, script])
    assert res.returncode == 124, res
    causes = likely_causes(res.stderr)
    text = "\n".join(causes)
    assert "waiting on asyncio.Event" in text and \
        "threadsafe_cross_loop.py:%d in Backend.query" % marker_line(
            script, "backend-waits") in text, res.stderr[:3000]
    assert not any("stuck task" in c for c in causes), text
