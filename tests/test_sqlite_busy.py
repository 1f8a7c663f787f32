"""`run`'s cause for a connection waiting for a SQLite database's lock
(targets/sqlite_busy.py).  SQLite's busy handler sleeps and retries, so
before, `run` said the thread "sleeps in time.sleep (polling ...)", and
named no lock.  Now the cause names the database, which of SQLite's
locks keeps the waiter out (the kernel's /proc/locks says who holds
it), and, for a Python holder of the run's tree, where it is, and a
deadlock when the holder waits for the waiter to end."""

import json
import re

import pytest

from conftest import interpreter_or_skip, marker_line, target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("sqlite_busy.py")
BUSY = (": SQLite's busy handler sleeps and tries again until the "
        "connection's timeout")
INTERPRETERS = ("3.6", "3.11-debian", "3.12", "3.14", "3.14t")


def run_target(work, python, mode, timeout="3"):
    """The target in mode under `run` until its timeout: its ready file,
    the causes, and the cause of the waiter's (its lines)."""
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", timeout, "--", python, SCRIPT,
                         str(ready),
                         mode, str(work)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes)
            if c.startswith("  process %d: " % info["waiter"]) and BUSY in c]
    assert len(head) == 1, causes
    out = [causes[head[0]]]
    for c in causes[head[0] + 1:]:
        if c.startswith("  process "):
            break
        out.append(c)
    assert not any("sleeps in time.sleep (polling" in c for c in causes), \
        causes
    return info, causes, out


def line(marker):
    return marker_line(SCRIPT, marker)


def check_waiter(info, cause, name, func, marker):
    """The cause's headline names the waiting thread and the database;
    its next line where the thread waits: in func, at marker."""
    assert cause[0].startswith(
        '  process %d: thread %d "%s" waits for a lock of SQLite database '
        "%s%s (" % (info["waiter"], info["tid"], name, info["db"], BUSY)), \
        cause
    assert re.match(r"      at \S*sqlite_busy\.py:%d in %s: "
                    % (line(marker), func), cause[1]), cause


def held_by_target(info, lines, lock, marker, pid=None, func="<module>"):
    """lines: the database's lock (pattern lock) held by process pid
    (the target's), then where that holder is: its main thread at
    marker, in func."""
    pid = info["pid"] if pid is None else pid
    assert len(lines) == 2, lines
    assert re.match(r"      %s: its %s is held by process %d \(\S+\) as its "
                    r"fd \d+$" % (re.escape(info["db"]), lock, pid),
                    lines[0]), lines
    assert re.match(r'      holder: process %d, thread %d "MainThread" at '
                    r"\S*sqlite_busy\.py:%d in %s: "
                    % (pid, pid, line(marker), re.escape(func)),
                    lines[1]), lines


@pytest.mark.parametrize("ident", INTERPRETERS)
def test_thread_waits_for_own_process(ident, work):
    py = interpreter_or_skip(ident)
    info, causes, cause = run_target(work, py.path, "thread")
    check_waiter(info, cause, "writer", "insert", "busy-insert")
    assert cause[2] == (
        "      %s: its write lock (RESERVED: a write transaction not yet "
        "committed) is held by this process itself: one of its "
        "connections, maybe the waiting one (a process's connections share "
        "its locks)"
        % info["db"]), cause
    assert len(cause) == 3, cause


@pytest.mark.parametrize("ident", INTERPRETERS)
def test_wal_writer_deadlock(ident, work):
    py = interpreter_or_skip(ident)
    info, causes, cause = run_target(work, py.path, "wal")
    check_waiter(info, cause, "MainThread", "insert", "busy-insert")
    held_by_target(info, cause[2:4], r"WAL write lock \(a write transaction "
                   r"open\)", "busy-waits-child")
    assert cause[4].startswith(
        "      a deadlock: process %d waits for this process to end "
        "(subprocess.Popen " % info["pid"]), cause


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_commit_waits_for_reader(ident, work):
    py = interpreter_or_skip(ident)
    info, causes, cause = run_target(work, py.path, "reader")
    check_waiter(info, cause, "MainThread", "commit", "busy-commit")
    assert cause[2] == (
        "      %s: its PENDING lock (a writer waiting for the readers to "
        "end, to commit) is held by this process itself" % info["db"]), cause
    held_by_target(info, cause[3:5], r"read lock \(SHARED: a read "
                   r"transaction open\)", "busy-reader-sleeps")


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_checkpoint_waits_for_reader(ident, work):
    """A WAL checkpoint waits for a reader process: its own lock, then
    the reader's read mark (not the SHARED lock every WAL connection
    holds on the database, which keeps no one out)."""
    py = interpreter_or_skip(ident)
    info, causes, cause = run_target(work, py.path, "checkpoint")
    check_waiter(info, cause, "MainThread", "<module>", "busy-checkpoint")
    assert cause[2] == (
        "      %s: its WAL checkpoint lock (a checkpoint running) is held by "
        "this process itself" % info["db"]), cause
    held_by_target(info, cause[3:5], r"WAL read lock \(a read transaction "
                   r"open\)", "busy-child-reads", info["reader"], "read")
    assert len(cause) == 5, cause


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_wait_begun_during_the_samples(ident, work):
    """The writer begins its insert 2.5 s into a 4 s timeout (sampled
    from 2 s, the threshold 1 s), after short sleeps at another line:
    SQLite's retries keep it at its line since it came there, for longer
    than the threshold.  Before, only a waiter at its line from the
    first sample was named, and this one was in no cause."""
    py = interpreter_or_skip(ident)
    info, causes, cause = run_target(work, py.path, "late", timeout="4")
    check_waiter(info, cause, "writer", "insert", "busy-insert")
    assert re.search(r" \(retrying at that line at every sample since it "
                     r"came there, [0-9.]+s\)$", cause[0]), cause
