"""Threads asleep in write(2) are left running (attach/live_writers.c).

Stopping a thread asleep in write(2) on a full pipe cuts the write short,
and CPython's unbuffered text streams (python -u, PYTHONUNBUFFERED=1)
drop what it did not take: before, one dump of targets/blocked_writers.py
left 65,536 of its 1,000,000 bytes in each pipe.  The oracle is the pipe
itself, drained through /proc/PID/fd after the dumps: every byte and the
"END" line the target writes after them must come out.  What the dumps
say of the writers is checked against the target's own report (tids and
fds) and its markers.
"""

import json
import os
import re
import time

import subprocess
import sys
import threading

import pytest

from conftest import (TIME_SCALE, control_interpreter, marker_line,
                      run_coroscope, target_script, wait_until)
from test_attach_hostile import wait_main_zombie
from test_run import (coroscope_run, likely_causes, read_json,  # noqa: F401
                      work)

SCRIPT = target_script("blocked_writers.py")
DRAIN_TIMEOUT = 20.0


def drain(pid, fd, until=None, timeout=DRAIN_TIMEOUT, through=None):
    """Read the pipe the target holds the read end of as fd (reached
    through thread `through`, when its main thread has exited): until
    the bytes end with `until`, or for `timeout` seconds.  The bytes."""
    got = []
    tail = b""
    path = ("/proc/%d/fd/%d" % (pid, fd) if through is None else
            "/proc/%d/task/%d/fd/%d" % (pid, through, fd))
    r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(r, 1 << 16)
            except BlockingIOError:
                time.sleep(0.005)
                continue
            got.append(chunk)
            tail = (tail + chunk)[-16:]
            if until is not None and tail.endswith(until):
                break
    finally:
        os.close(r)
    return b"".join(got)


def thread_by_tid(doc, tid):
    hits = [t for t in doc["threads"] if t["tid"] == tid]
    assert len(hits) == 1, (tid, doc["threads"])
    return hits[0]


def call_fd(thread):
    """The call and fd of a thread left running, else None."""
    left = thread["left_running"]
    return left and (left["call"], left["fd"])


def frame_lines(thread):
    return [(fr["function"], fr["line"]) for fr in thread["frames"]
            if fr["file"].endswith("blocked_writers.py")]


def test_writers_are_left_running_and_lose_nothing(keeper, interp):
    """Two writers asleep in write(2) (a thread and the main thread) are
    shown where they write, marked as left running, and after a text,
    a JSON and a --native dump the pipes give every byte the target
    wrote, then its END line; the reporter thread, asleep in a sleep,
    was stopped as ever."""
    target = keeper.start_target(interp, "blocked_writers.py", "once")
    said = target.ready
    writers = said["writers"]
    write = marker_line(SCRIPT, "write")
    text = run_coroscope("dump", target.pid)
    assert text.returncode == 0, text
    for name, callsite in (("writer", "thread-writes"),
                           ("main", "main-writes")):
        tid, wfd, _ = writers[name]
        shown = "MainThread" if name == "main" else name
        head = re.search(r'\nThread %d "%s"[^\n]* \(left running: a stop '
                         r'would cut short its write\(2\) to fd %d, a pipe '
                         r'this process holds the read end of as fd %d; '
                         r'nothing read from it while coroscope looked\)\n'
                         % (tid, shown, wfd, writers[name][2]), text.stdout)
        assert head, text.stdout
        block = text.stdout[head.end():].split("\n\n")[0]
        assert ('blocked_writers.py", line %d, in write_all\n'
                % write) in block, block
        assert (", line %d, in " % marker_line(SCRIPT, callsite)) in block
    assert "left running" not in re.search(
        r'\nThread \d+ "reporter"[^\n]*', text.stdout).group(0)

    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    assert doc["stats"]["attempts"] == 1, doc["stats"]
    for name, (tid, wfd, rfd) in writers.items():
        t = thread_by_tid(doc, tid)
        assert t["left_running"] == {
            "call": "write", "fd": wfd, "file": "pipe", "unread": True,
            "read_ends": [{"pid": target.pid, "fd": rfd,
                           "parent": False, "sibling": False}]}, t
        assert frame_lines(t)[0] == ("write_all", write), t["frames"]
    reporter = [t for t in doc["threads"] if t["name"] == "reporter"]
    assert [t["left_running"] for t in reporter] == [None], doc["threads"]

    if os.uname().machine == "x86_64":
        native = run_coroscope("dump", "--native", target.pid)
        assert native.returncode == 0, native
        assert native.stdout.count("  (native frames not read: the thread "
                                   "was left running)\n") == 2, native.stdout
        for tid, wfd, _ in writers.values():
            assert re.search(r"\nThread %d [^\n]*\(left running: [^\n]*"
                             r" \[blocked in: io\]\n" % tid,
                             native.stdout), native.stdout

    for name, (tid, wfd, rfd) in writers.items():
        data = drain(target.pid, rfd, until=b"END\n")
        assert len(data) == said["size"] + 4 and \
            data == b"x" * said["size"] + b"END\n", \
            (name, len(data), data[-40:])


def held(pid, tid):
    """Is thread tid of pid in a ptrace stop (coroscope holds it)?"""
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "t"
    except (OSError, IndexError):
        return False


def switches(pid, tid):
    """Thread tid's context switches, both kinds added."""
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        return sum(int(line.split()[1]) for line in f
                   if "ctxt_switches" in line)


def dump_draining(keeper, target, chunk, pause):
    """`dump --json` of target while coroscope holds it 400 ms a try
    (COROSCOPE_TEST_HOLD_MS), reading `chunk` bytes of each writer's
    pipe every `pause` s during the first 200 ms each time the reporter
    thread is held (only then: a writer woken before a try could be
    runnable when looked at, and be stopped).  The document, and the bytes read per writer."""
    writers = target.ready["writers"]
    dump = keeper.spawn_coroscope(["dump", "--json", str(target.pid)],
                                  env={"COROSCOPE_TEST_HOLD_MS": "400"})
    deadline = time.monotonic() + 60
    rfds = dict((name, os.open("/proc/%d/fd/%d" % (target.pid, w[2]),
                               os.O_RDONLY | os.O_NONBLOCK))
                for name, w in writers.items())
    got = dict((name, []) for name in writers)
    since = hold = None
    try:
        while dump.poll() is None and time.monotonic() < deadline:
            now_held = held(target.pid, target.ready["reporter"])
            # (a new hold, however short the gap this loop may miss:
            # the held thread's switches moved since the last one)
            if now_held:
                count = switches(target.pid, target.ready["reporter"])
                if count != hold:
                    hold, since = count, time.monotonic()
            # (the first half of each hold only: the writers then fill
            # their pipes and sleep in a write again before the next
            # try looks at them)
            if now_held and time.monotonic() - since < 0.2:
                for name, r in rfds.items():
                    try:
                        got[name].append(os.read(r, chunk))
                    except BlockingIOError:
                        pass
            time.sleep(pause)
    finally:
        for r in rfds.values():
            os.close(r)
    out, err = dump.communicate(timeout=30)
    assert dump.returncode == 0, err
    return json.loads(out), dict((k, b"".join(v)) for k, v in got.items())


def test_a_slow_reader_wakes_no_retry_and_loses_nothing(keeper):
    """A pipe read slowly while coroscope holds the target wakes the
    writer again and again inside its one write(2) (it copies what fits
    and sleeps again), which never returns: what was read stands (one
    collection), and no try stops the writer.  Every byte comes out.
    (Counting the writer's context switches alone, a first version
    read three times and stopped the writer the last time: the pipes
    then came short.)"""
    target = keeper.start_target(control_interpreter(),
                                 "blocked_writers.py", "once")
    said = target.ready
    doc, early = dump_draining(keeper, target, 4096, 0.02)
    assert doc["stats"]["attempts"] == 1, doc["stats"]
    assert all(early.values()), "nothing was read during the holds"
    for name, (tid, wfd, rfd) in said["writers"].items():
        assert call_fd(thread_by_tid(doc, tid)) == ("write", wfd)
        data = early[name] + drain(target.pid, rfd, until=b"END\n")
        assert data == b"x" * said["size"] + b"END\n", \
            (name, len(data), data[-40:])


def test_a_writer_that_ran_is_read_again(keeper):
    """Writers whose writes end while coroscope holds the target (their
    pipes drained fast meanwhile) ran, and may have changed what was
    read: coroscope reads the whole target again, three collections in
    all, and keeps the last with a warning rather than stop a writer."""
    target = keeper.start_target(control_interpreter(),
                                 "blocked_writers.py", "loop")
    doc, early = dump_draining(keeper, target, 1 << 20, 0.002)
    assert doc["stats"]["attempts"] == 3, doc["stats"]
    for tid, wfd, _ in target.ready["writers"].values():
        t = thread_by_tid(doc, tid)
        assert call_fd(t) == ("write", wfd), t
    assert [w for w in doc["warnings"]
            if w.startswith("a thread left running (asleep in a write a "
                            "stop would cut short) ran while the target "
                            "was read, in 3 tries")], doc["warnings"]


def test_writer_beside_an_exited_main_thread(keeper, interp):
    """A process whose main thread called pthread_exit() and whose one
    live thread sleeps in write(2): no thread is stopped, the process is
    read through the writer, and the main thread is still told apart
    as exited (before 3.11 by elimination, which a thread without
    registers first kept from working); every byte comes out."""
    probe = subprocess.run([interp.path, "-c", "import ctypes"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode:
        pytest.skip("this interpreter has no ctypes to call "
                    "pthread_exit() with")
    target = keeper.start_target(interp, "main_exits.py", "write")
    wait_main_zombie(target)
    worker = target.ready["worker_tid"]
    script = target_script("main_exits.py")

    def writing():
        try:
            with open("/proc/%d/task/%d/syscall"
                      % (target.pid, worker)) as f:
                return f.read().split()[0] == "1"
        except (OSError, IndexError):
            return False
    assert wait_until(writing, 10 * TIME_SCALE), "the worker never wrote"
    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    threads = dict((t["tid"], t) for t in doc["threads"])
    assert threads[target.pid]["exited"] is True, threads
    assert call_fd(threads[worker]) == ("write", target.ready["pipe"][1]), \
        threads
    # (its files reached through the writer: the main thread's /proc
    # entry has none)
    assert threads[worker]["left_running"]["read_ends"] == \
        [{"pid": target.pid, "fd": target.ready["pipe"][0],
          "parent": False, "sibling": False}], threads[worker]
    assert ("write_all" not in str(threads[worker]["frames"]) and
            threads[worker]["frames"][0]["line"] ==
            marker_line(script, "worker-writes")), threads[worker]
    text = run_coroscope("dump", target.pid).stdout
    assert ("Thread %d \"MainThread\" (exited; as the interpreter still "
            "lists it)" % target.pid) in text, text
    data = drain(target.pid, target.ready["pipe"][0], until=b"END\n",
                 through=worker)
    assert data == b"x" * 1000000 + b"END\n", (len(data), data[-40:])


def test_print_under_python_u_to_a_parent_that_waits(interp):
    """python -u printing 1,000,000 characters to a pipe its parent (this
    test, as Popen(stdout=PIPE) before a wait()) does not read yet: the
    thread is left running, and the report says the parent holds the
    read end, and as which fd; then the parent reads every byte."""
    child = subprocess.Popen(
        [interp.path, "-u", "-c",
         "print('x' * 1000000)\nprint('END')\n"],
        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        def writing():
            try:
                with open("/proc/%d/syscall" % child.pid) as f:
                    return f.read().split()[0] in ("1", "20")
            except (OSError, IndexError):
                return False
        assert wait_until(writing, 10 * TIME_SCALE), "it never wrote"
        res = run_coroscope("dump", child.pid)
        assert res.returncode == 0, res
        with open("/proc/self/comm") as f:
            me = f.read().strip()
        assert re.search(r"\nThread %d [^\n]*\(left running: a stop would "
                         r"cut short its write\(2\) to fd 1, a pipe its "
                         r"parent %d \(%s\) holds the read end of as fd "
                         r"%d; nothing read from it while coroscope "
                         r"looked\)\n" % (child.pid, os.getpid(),
                                          re.escape(me),
                                          child.stdout.fileno()),
                         res.stdout), res.stdout
        out = child.communicate(timeout=30 * TIME_SCALE)[0]
        assert out == b"x" * 1000000 + b"\nEND\n", (len(out), out[-40:])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_hostile_parent_name(keeper):
    """The parent's name comes from the kernel, which the parent sets:
    one with an escape sequence and a quote is shown escaped, never
    raw."""
    py = control_interpreter()
    parent = keeper.spawn(
        [py.path, "-c",
         "import subprocess, sys, time\n"
         "with open('/proc/self/comm', 'w') as f:\n"
         "    f.write('p\\x1b[31m\"q')\n"
         "c = subprocess.Popen([sys.executable, '-u', '-c',\n"
         "                      'print(\"x\" * 1000000)'],\n"
         "                     stdout=subprocess.PIPE)\n"
         "print(c.pid, c.stdout.fileno(), flush=True)\n"
         "time.sleep(3600)\n"],
        stdout=subprocess.PIPE)
    child, fd = (int(x) for x in parent.stdout.readline().split())

    def writing():
        try:
            with open("/proc/%d/syscall" % child) as f:
                return f.read().split()[0] in ("1", "20")
        except (OSError, IndexError):
            return False
    assert wait_until(writing, 10 * TIME_SCALE), "it never wrote"
    res = run_coroscope("dump", child)
    assert res.returncode == 0, res
    assert "\x1b" not in res.stdout, res.stdout
    # (the kernel replaced the escape byte by "?"; the quote is
    # backslashed as in every name)
    assert ("a pipe its parent %d (p?[31m\\\"q) holds the read end of as "
            "fd %d;" % (parent.pid, fd)) in res.stdout, res.stdout
    os.kill(child, 9)


def run_pipe_readers(work, py, mode):
    """`coroscope run` for 3 s over targets/pipe_readers.py MODE, which
    it times out: the result, the target's ready file, the --report
    file."""
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--report", work / "r.json",
                         "--", py.path, target_script("pipe_readers.py"),
                         ready, mode])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    return res, info, read_json(work / "r.json", "--report file")


def test_run_names_the_unread_pipe(work):
    """`run` over the subprocess deadlock (pipe_readers.py wait): the
    child, blocked printing to a pipe its parent holds and does not
    read, is a cause of its own ("write"), at its own line, naming the parent and its fd (the
    parent's side, waiting on the Popen, was one already)."""
    py = control_interpreter()
    res, info, report = run_pipe_readers(work, py, "wait")
    want = ("  process %d: thread %d blocked writing to its stdout at "
            "<string>:1 in <module>: a pipe its parent %d (%s) (fd %d) "
            "holds the read end of, read none of it while coroscope looked"
            % (info["child"], info["child"], info["pid"],
               os.path.basename(py.path)[:15], info["fd"]))
    causes = likely_causes(res.stderr)
    assert want in causes, causes
    assert [c["kind"] for c in report["causes"]
            if c["pid"] == info["child"]] == ["write"], report["causes"]


def test_run_names_a_sibling_that_does_not_read(work):
    """`run` over a pipeline's writer whose reader, a sibling (`sleep`,
    another child of its parent, as in a shell's `python app.py | sleep
    3600`), never reads: the writer is a "write" cause naming the
    sibling, its name and fd (before, no cause: only the writer's own
    process and its parent were looked at)."""
    py = control_interpreter()
    res, info, report = run_pipe_readers(work, py, "pipeline")
    want = ("  process %d: thread %d blocked writing to its stdout at "
            "<string>:1 in <module>: a pipe its sibling process %d (sleep) "
            "(fd 0) holds the read end of, read none of it while coroscope "
            "looked" % (info["child"], info["child"], info["sibling"]))
    causes = likely_causes(res.stderr)
    assert want in causes, causes
    assert [c["kind"] for c in report["causes"]
            if c["pid"] == info["child"]] == ["write"], report["causes"]


def test_dump_names_a_sibling_that_does_not_read(keeper):
    """`dump` of that writer: its thread, left running, writes to a pipe
    its sibling holds the read end of, in text and JSON."""
    target = keeper.start_target(control_interpreter(), "pipe_readers.py",
                                 "pipeline")
    said = target.ready
    try:
        res = run_coroscope("dump", said["child"])
        assert res.returncode == 0, res
        assert ("(left running: a stop would cut short its write(2) to "
                "fd 1, a pipe its sibling process %d (sleep) holds the "
                "read end of as fd 0; nothing read from it while coroscope "
                "looked)" % said["sibling"]) in res.stdout, res.stdout
        doc = json.loads(run_coroscope("dump", "--json",
                                       said["child"]).stdout)
        left = [t["left_running"] for t in doc["threads"]
                if t["left_running"]]
        assert [l["read_ends"] for l in left] == [[
            {"pid": said["sibling"], "fd": 0, "parent": False,
             "sibling": True}]], left
    finally:
        for pid in (said["child"], said["sibling"]):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def test_a_slowly_reading_parent_is_no_cause(work):
    """A parent that reads its child's output slowly (4 KB every 5 ms)
    wakes the writer while coroscope looks: `run` names no "write"
    cause (a first version said the parent "does not read")."""
    res, info, report = run_pipe_readers(work, control_interpreter(),
                                         "slow")
    assert not [c for c in report["causes"] if c["kind"] == "write"], \
        report["causes"]
    assert "blocked writing" not in "\n".join(likely_causes(res.stderr))
    # (the child was seen: a writer left running, its parent's pipe)
    child = [p for p in report["processes"] if p["pid"] == info["child"]]
    assert len(child) == 1, [p["pid"] for p in report["processes"]]


def test_a_forked_child_and_its_parent_both_hold_the_read_end(keeper):
    """A forked child writing to a pipe whose read end it kept, as its
    parent did: both are named, not the child alone (a first version
    said "this process holds the read end")."""
    target = keeper.start_target(control_interpreter(), "pipe_readers.py",
                                 "fork")
    said = target.ready
    res = run_coroscope("dump", said["child"])
    assert res.returncode == 0, res
    assert ("a pipe this process (fd %d) and its parent %d (" %
            (said["fd"], said["pid"])) in res.stdout, res.stdout
    assert (") (fd %d) hold the read end of; nothing read from it while "
            "coroscope looked)" % said["fd"]) in res.stdout, res.stdout
    doc = json.loads(run_coroscope("dump", "--json", said["child"]).stdout)
    left = [t["left_running"] for t in doc["threads"] if t["left_running"]]
    assert [l["read_ends"] for l in left] == [[
        {"pid": said["child"], "fd": said["fd"], "parent": False,
         "sibling": False},
        {"pid": said["pid"], "fd": said["fd"], "parent": True,
         "sibling": False}]], left
    os.kill(said["child"], 9)


@pytest.mark.slow
def test_a_writer_woken_as_coroscope_looks_is_left_running(keeper):
    """A pipe read a little at a time wakes its writer inside its
    write(2) again and again; on a crowded CPU the writer then waits for
    it, and coroscope's look before a stop finds it "running" rather
    than asleep in the call.  It is looked at again until it sleeps in
    the call, and left running: over 40 dumps no write returns short.
    (It was stopped, which cut its write short: 1 to 8 short writes in
    30 dumps here; under load `run`'s test of a slowly reading parent
    saw the child's print end early.)  Not in the sanitizer pass: there
    the slower stop leaves more time for the writer's call to end and
    the writer to wait for the CPU past the looks' budget, the window
    that remains (it failed once so, 1 short write in 40 dumps)."""
    cpu = min(os.sched_getaffinity(0))
    target = keeper.start_target(control_interpreter(), "woken_writer.py",
                                 str(cpu))
    said = target.ready
    # (a busy loop on that CPU, for 120 s at most, whatever happens)
    burner = subprocess.Popen(
        [sys.executable, "-c", "import os, time\n"
         "os.sched_setaffinity(0, {%d})\nend = time.monotonic() + 120\n"
         "while time.monotonic() < end:\n    pass\n" % cpu])
    keeper.others.append(burner)
    r = os.open("/proc/%d/fd/%d" % (target.pid, said["fd"]),
                os.O_RDONLY | os.O_NONBLOCK)
    done = threading.Event()
    got = [0]

    def read_slowly():
        while not done.is_set():
            try:
                got[0] += len(os.read(r, 1 << 16))
            except BlockingIOError:
                pass
            time.sleep(0.001)

    reader = threading.Thread(target=read_slowly)
    reader.start()
    left = 0
    try:
        for _ in range(40):
            res = run_coroscope("dump", "--json", target.pid)
            assert res.returncode == 0, res
            left += bool(thread_by_tid(res.json(), said["writer"])
                         ["left_running"])
    finally:
        done.set()
        reader.join()
        os.close(r)
        burner.kill()
        burner.wait()
    assert got[0] > 0, "nothing was read during the dumps"
    assert left, "the writer was never left running"
    short = os.path.join(target.workdir, "ready.json.short")
    assert not os.path.exists(short), \
        "writes cut short: %s" % open(short).read()
