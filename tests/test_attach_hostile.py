"""Targets that try the attach side (issue 16): exact ids and clear errors.

- a target in another PID namespace shows the tids this host sees
  (16.3);
- a thread id given as the pid shows its process and says so (16.7);
- the vfork child of a posix_spawn() that has not exec'd yet is refused
  with a message saying what it is, not shown as its parent (16.8);
- a target that exits while being read gives exit 7, not 5; a
  non-dumpable target and a target another coroscope traces are named
  as such; --no-block reads the target broke are tried again, and a
  failure that remains says so (16.12).
"""
import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import (COROSCOPE, INTERPRETERS, TIME_SCALE,
                      assert_one_error_line, control_interpreter,
                      every_status, marker_line,
                      proc_status, run_coroscope, target_script, task_ids,
                      wait_until)

# The control_interp fixture and the wait for a background coroscope's
# attach are test_errors.py's.
from test_errors import HOLD_ENV, NOBODY, control_interp, wait_attached  # noqa: F401


def version_tuple(interp):
    return tuple(int(x) for x in interp.version.split(".")[:2])


def interp_at_least(minor):
    for i in INTERPRETERS:
        if version_tuple(i) >= (3, minor) and "debian" not in i.id:
            return i
    return None


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def start_threads_target(keeper, interp):
    return keeper.start_target(interp, "threads_target.py", parked_main=True)


# ---------------------------------------------------------------------------
# 16.7: a thread id as the pid

def test_thread_id_names_its_process(control_interp, keeper):
    target = start_threads_target(keeper, control_interp)
    others = [t for t in task_ids(target.pid) if t != target.pid]
    assert others, "the target has no thread besides the main one"
    tid = others[0]
    res = run_coroscope("dump", "--json", tid)
    doc = res.json()
    assert doc["pid"] == target.pid, res
    assert tid in [t["tid"] for t in doc["threads"]], res
    notes = [l for l in res.stderr.splitlines() if l]
    assert notes == ["coroscope: note: %d is a thread of process %d; "
                     "showing the process" % (tid, target.pid)], res


def test_process_id_has_no_note(control_interp, keeper):
    target = start_threads_target(keeper, control_interp)
    res = run_coroscope("dump", "--json", target.pid)
    assert res.json()["pid"] == target.pid
    assert res.stderr == "", res


# ---------------------------------------------------------------------------
# 16.3: PID namespaces

def start_in_pid_namespace(keeper, interp, tmp_path):
    """threads_target.py as pid 1 of a new PID namespace; (host pid, ready
    data as the target saw itself)."""
    if not shutil.which("unshare"):
        pytest.skip("unshare(1) is not installed")
    if os.geteuid() != 0:
        pytest.skip("needs root for a new PID namespace")
    ready = str(tmp_path / "ready.json")
    # --kill-child: the keeper kills unshare; the target, pid 1 of the
    # namespace, must die with it rather than outlive the test run.
    unshare = keeper.spawn(["unshare", "--pid", "--fork", "--mount-proc",
                            "--kill-child", interp.path,
                            target_script("threads_target.py"), ready])
    assert wait_until(lambda: os.path.exists(ready) or
                      unshare.poll() is not None, 30 * TIME_SCALE), \
        "target in a PID namespace not ready"
    assert unshare.poll() is None, "unshare exited %s" % unshare.returncode
    kids = children(unshare.pid)
    assert len(kids) == 1, kids
    with open(ready) as f:
        data = json.load(f)
    return kids[0], data


def own_ns_tid(pid, tid):
    # A task's NSpid line gives its tid in each namespace, ours first.
    return int(proc_status(pid, tid)["NSpid"].split()[-1])


@pytest.mark.parametrize("mode", ["blocking", "no-block"])
def test_pid_namespace_threads_show_host_tids(keeper, tmp_path, mode):
    # 3.11+ records gettid() in the thread state: the namespace's tid.
    interp = interp_at_least(11)
    if interp is None:
        pytest.skip("no pyenv CPython 3.11 or later")
    host_pid, seen = start_in_pid_namespace(keeper, interp, tmp_path)
    assert seen["pid"] == 1, "the target is not pid 1 of its namespace"
    args = ["dump", "--json"] + (["--no-block"] if mode == "no-block" else [])
    doc = run_coroscope(*(args + [host_pid])).json()
    assert doc["pid"] == host_pid
    host_tids = set(task_ids(host_pid))
    shown = [t["tid"] for t in doc["threads"]]
    assert set(shown) == host_tids, (shown, host_tids)
    # Each thread is the one it claims: its namespace tid is the one the
    # thread itself recorded.
    by_ident = dict((int(k), v) for k, v in seen["threads"].items())
    for t in doc["threads"]:
        want = by_ident[t["thread_id"]]["tid"]
        assert own_ns_tid(host_pid, t["tid"]) == want, (t, want)


# ---------------------------------------------------------------------------
# 16.8: the vfork child of posix_spawn before exec

def test_vfork_child_before_exec_is_refused(control_interp, keeper, tmp_path):
    if version_tuple(control_interp) < (3, 8):
        pytest.skip("os.posix_spawn needs Python 3.8")
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    target = keeper.start_target(control_interp, "vfork_target.py", fifo)
    assert wait_until(lambda: children(target.pid), 10 * TIME_SCALE), \
        "no posix_spawn child appeared"
    child = children(target.pid)[0]
    try:
        res = run_coroscope("dump", "--json", child)
        line = assert_one_error_line(res, 5, "process %d" % child, "vfork",
                                     "process %d" % target.pid)
        assert "not called exec" in line, res
        assert res.stdout == "", res
    finally:
        # Let the child go on to exec /bin/true.  It shows as a child
        # before it reaches its open() of the fifo: until it does, a
        # writer's open fails with ENXIO (seen once in the full suite).
        deadline = time.time() + 10 * TIME_SCALE
        while True:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError as e:
                if e.errno != errno.ENXIO or time.time() > deadline:
                    raise
                time.sleep(0.05)


def kernel_thread():
    """A kernel thread's pid (a child of kthreadd, pid 2), or None (none
    visible: a PID namespace of a container)."""
    for pid, st in every_status():
        if st.get("PPid") == "2" and "VmSize" not in st:
            return pid
    return None


def test_kernel_thread_is_refused():
    """A kernel thread has no address space; kcmp() found its and
    kthreadd's alike, and it was called a vfork child of process 2."""
    pid = kernel_thread()
    if pid is None:
        pytest.skip("no kernel thread visible here (a PID namespace)")
    res = run_coroscope("dump", pid)
    line = assert_one_error_line(res, 5, "process %d is a kernel thread"
                                 % pid)
    assert "vfork" not in line, line


@pytest.mark.parametrize("arg", [" 12", "+12", "12 ", "0x1c", ""])
def test_pid_only_digits(arg):
    res = run_coroscope("dump", arg)
    assert_one_error_line(res, 2, "is not a process id")


# ---------------------------------------------------------------------------
# 16.12: errors that say what happened

@pytest.mark.not_sanitized("gdb and the sanitizer runtime do not mix")
def test_exit_while_locating_is_exit_7_not_5(keeper):
    """The target dies after coroscope opened it, before the interpreter
    was found (gdb holds coroscope at pyproc_locate)."""
    gdb = shutil.which("gdb")
    if gdb is None:
        pytest.skip("gdb is not installed")
    if os.environ.get("COROSCOPE_SANITIZED") == "1":
        pytest.skip("gdb and the sanitizer runtime do not mix")
    sleeper = keeper.spawn([control_interpreter().path, "-c",
                            "import time; time.sleep(600)"])
    wait_until(lambda: task_ids(sleeper.pid), 5)
    out = subprocess.run(
        [gdb, "-q", "-batch", "-nx",
         "-ex", "set breakpoint pending on", "-ex", "break pyproc_locate",
         "-ex", "run", "-ex", "shell kill -9 %d" % sleeper.pid,
         "-ex", "shell sleep 0.3", "-ex", "continue",
         "--args", COROSCOPE, "dump", str(sleeper.pid)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, universal_newlines=True,
        timeout=120 * TIME_SCALE)
    # "Breakpoint 1, pyproc_locate (", or with an address before the
    # name where the function is inlined (the LTO build).
    if not re.search(r"Breakpoint 1, (0x[0-9a-f]+ in )?pyproc_locate \(",
                     out.stdout):
        pytest.skip("gdb could not stop coroscope at pyproc_locate: %s"
                    % out.stdout[-2000:])
    assert "exited with code 07" in out.stdout, out.stdout
    assert "exited while being read" in out.stdout, out.stdout
    assert "not a Python process" not in out.stdout, out.stdout


def test_second_coroscope_names_the_first(control_interp, keeper):
    target = keeper.start_target(control_interp, "progress_target.py",
                                 "{workdir}/counter.txt")
    first = keeper.spawn_coroscope(["dump", str(target.pid)],
                                   env={HOLD_ENV: "10000"})
    wait_attached(first, target.pid)
    res = run_coroscope("dump", target.pid)
    line = assert_one_error_line(res, 4, "permission denied",
                                 "already traced by process %d" % first.pid,
                                 "another coroscope")
    assert "debugger" not in line, res
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=30 * TIME_SCALE)
    assert target.proc.poll() is None


def tracer_of(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        return int(re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M).group(1))


def test_a_thread_traced_by_a_debugger_is_named(control_interp, keeper):
    """strace -p TID traces one thread alone.  Before, the refusal came
    once coroscope held the other threads, and said "coroscope already
    traces it"; it names the thread and its tracer now, and leaves the
    rest running."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    target = start_threads_target(keeper, control_interp)
    tid = max(int(t) for t in os.listdir("/proc/%d/task" % target.pid))
    assert tid != target.pid
    tracer = subprocess.Popen(["strace", "-p", str(tid), "-o", os.devnull],
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: tracer_of(target.pid, tid) == tracer.pid,
                          10), "strace did not attach"
        res = run_coroscope("dump", target.pid)
        line = assert_one_error_line(
            res, 4, "permission denied",
            "its thread %d is already traced by process %d (strace)"
            % (tid, tracer.pid), "detach that debugger first")
        assert "coroscope already traces" not in line, res
        for t in os.listdir("/proc/%d/task" % target.pid):
            if int(t) != tid:
                assert tracer_of(target.pid, int(t)) == 0, t
    finally:
        tracer.terminate()
        tracer.wait(timeout=30)
    assert target.proc.poll() is None


def nobody_python():
    """An interpreter user nobody can run (pyenv's live under /root)."""
    for p in ("/usr/bin/python3.11", "/usr/bin/python3"):
        if os.access(p, os.X_OK):
            probe = subprocess.run(
                ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                 "--clear-groups", "--", p, "-c", "pass"], cwd="/",
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
            if probe.returncode == 0:
                return p
    return None


def test_non_dumpable_target_is_named(keeper):
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv(1) to run as user nobody")
    probe = subprocess.run(["setpriv", "--reuid=%d" % NOBODY,
                            "--regid=%d" % NOBODY, "--clear-groups", "--",
                            COROSCOPE, "--version"], cwd="/",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
    if probe.returncode != 0:
        pytest.skip("user nobody cannot run %s" % COROSCOPE)
    python = nobody_python()
    if python is None:
        pytest.skip("no interpreter user nobody can run")
    workdir = tempfile.mkdtemp(prefix="coroscope-nodump-")
    os.chmod(workdir, stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO)
    ready = os.path.join(workdir, "ready.json")
    try:
        target = keeper.start_with_ready(
            ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
             "--clear-groups", "--", python,
             target_script("nondumpable_target.py"), ready], ready)
        pid = target.ready["pid"]
        assert os.stat("/proc/%d/status" % pid).st_uid == 0, \
            "prctl(PR_SET_DUMPABLE, 0) did not take"
        res = run_coroscope("dump", pid, user=NOBODY, cwd="/")
        assert_one_error_line(res, 4, "permission denied", str(pid),
                              "not dumpable")
        assert target.proc.poll() is None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_no_block_read_of_a_changing_target(control_interp, keeper):
    """--no-block reads of a target whose thread list churns: a read the
    target broke is tried again, and a failure that remains says why.
    (Half as many under the sanitizer, whose dumps take ten times as
    long: the same share must succeed.)"""
    target = keeper.start_target(control_interp, "mutating_target.py",
                                 "{workdir}/counter.txt")
    reads = 30 if os.environ.get("COROSCOPE_SANITIZED") == "1" else 60
    outcomes = []
    for _ in range(reads):
        res = run_coroscope("dump", "--no-block", "--json", target.pid)
        errors = [l for l in res.stderr.splitlines()
                  if not l.startswith("coroscope: warning:")]
        outcomes.append((res.returncode, errors))
        assert target.proc.poll() is None, "the target died"
    bad = [o for o in outcomes if o[0] != 0 and not
           (o[0] == 8 and len(o[1]) == 1 and
            "the target changed while being read (--no-block" in o[1][0])]
    assert not bad, bad
    assert sum(1 for o in outcomes if o[0] == 0) >= reads * 5 // 6, \
        outcomes


def wait_main_zombie(target):
    def main_gone():
        try:
            with open("/proc/%d/task/%d/stat" % (target.pid, target.pid)) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return False
    assert wait_until(main_gone, 10 * TIME_SCALE), "main thread still runs"


def test_main_thread_exited_process(interp, keeper):
    """A process whose main thread called pthread_exit() has no memory,
    maps or files under its own /proc entry (it is a zombie); coroscope
    reads it through a live thread: the worker where it waits, and the
    main thread where it called pthread_exit(), marked as exited."""
    probe = subprocess.run([interp.path, "-c", "import ctypes"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, universal_newlines=True)
    if probe.returncode:
        pytest.skip("this interpreter has no ctypes to call "
                    "pthread_exit() with: %s" % probe.stderr.strip())
    target = keeper.start_target(interp, "main_exits.py")
    wait_main_zombie(target)
    script = target_script("main_exits.py")
    waits = "main_exits.py\", line %d" % marker_line(script, "worker-waits")
    exits = "main_exits.py\", line %d" % marker_line(script, "main-exits")
    worker = target.ready["worker_tid"]

    res = run_coroscope("dump", target.pid)
    assert res.returncode == 0, res
    out = res.stdout
    # its command line, read through the live thread
    assert out.splitlines()[0].endswith(
        "main_exits.py " + os.path.join(target.workdir, "ready.json")), out
    head = "Thread %d \"MainThread\" (exited; as the interpreter still " \
        "lists it)" % target.pid
    assert head in out and exits in out.split(head, 1)[1], out
    survivor = "Thread %d \"survivor\"" % worker
    assert survivor in out and waits in out.split(survivor, 1)[1], out

    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    threads = {t["tid"]: t for t in json.loads(res.stdout)["threads"]}
    assert threads[target.pid]["exited"] is True, threads
    assert threads[worker]["exited"] is False, threads

    res = run_coroscope("dump", "--native", target.pid)
    assert res.returncode == 0, res
    main = res.stdout.split(head, 1)[1]
    assert main.index("(native frames not read: the thread has exited)") \
        < main.index(exits), res.stdout


def test_run_reads_a_process_whose_main_thread_exited(keeper, tmp_path):
    """`run` on such a process (its /proc/PID/stat says zombie): it is
    sampled and dumped, the worker's wait is a cause, and the exited main
    thread is not called stuck.  On a CPython before 3.11, where the
    main thread's tid is inferred."""
    old = [i for i in INTERPRETERS
           if version_tuple(i) < (3, 11) and "debian" not in i.id]
    if not old:
        pytest.skip("no CPython before 3.11 installed")
    script = target_script("main_exits.py")
    # four seconds, as test_oneline_deadlock_found: the main thread must
    # have exited before the dump, even on a loaded machine
    res = subprocess.run(
        [COROSCOPE, "run", "--timeout", "4", "--kill-after", "1", "--",
         old[0].path, script, str(tmp_path / "ready.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=60 * TIME_SCALE)
    err = res.stderr
    assert res.returncode == 124, err
    assert "dumping 1 process (1 Python)" in err, err
    pid = json.loads((tmp_path / "ready.json").read_text())["pid"]
    waits = "main_exits.py:%d" % marker_line(script, "worker-waits")
    causes = err.split("coroscope: sampled over", 1)[0]
    assert waits in causes, err
    assert "Thread %d \"MainThread\" (exited; " % pid in err, err
    stuck = [l for l in err.splitlines() if " stuck for " in l and
             "thread %d " % pid in l]
    assert not stuck, err
