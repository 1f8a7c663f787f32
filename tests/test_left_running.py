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

from conftest import (control_interpreter, marker_line, run_coroscope,
                      target_script)

SCRIPT = target_script("blocked_writers.py")
DRAIN_TIMEOUT = 20.0


def drain(pid, fd, until=None, timeout=DRAIN_TIMEOUT):
    """Read the pipe the target holds the read end of as fd: until the
    bytes end with `until`, or for `timeout` seconds.  The bytes."""
    got = []
    tail = b""
    r = os.open("/proc/%d/fd/%d" % (pid, fd), os.O_RDONLY | os.O_NONBLOCK)
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
                         r'would cut short its write\(2\) to fd %d\)\n'
                         % (tid, shown, wfd), text.stdout)
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
    for name, (tid, wfd, _) in writers.items():
        t = thread_by_tid(doc, tid)
        assert t["left_running"] == {"call": "write", "fd": wfd}, t
        assert frame_lines(t)[0] == ("write_all", write), t["frames"]
    reporter = [t for t in doc["threads"] if t["name"] == "reporter"]
    assert [t["left_running"] for t in reporter] == [None], doc["threads"]

    if os.uname().machine == "x86_64":
        native = run_coroscope("dump", "--native", target.pid)
        assert native.returncode == 0, native
        assert native.stdout.count("  (native frames not read: the thread "
                                   "was left running)\n") == 2, native.stdout

    for name, (tid, wfd, rfd) in writers.items():
        data = drain(target.pid, rfd, until=b"END\n")
        assert len(data) == said["size"] + 4 and \
            data == b"x" * said["size"] + b"END\n", \
            (name, len(data), data[-40:])


def test_a_writer_that_ran_is_read_again(keeper):
    """A writer left running that runs while the target is held (its
    pipe drained meanwhile) makes coroscope read the whole target again,
    three collections in all, the last stopping every thread; the last
    one's picture is what is shown."""
    interp = control_interpreter()
    target = keeper.start_target(interp, "blocked_writers.py", "loop")
    writers = target.ready["writers"]
    dump = keeper.spawn_coroscope(["dump", "--json", str(target.pid)],
                                  env={"COROSCOPE_TEST_HOLD_MS": "400"})
    # Drain a little at a time while it holds the target: each read
    # wakes the writer, which fills the room and sleeps again.
    deadline = time.monotonic() + 60
    rfds = [os.open("/proc/%d/fd/%d" % (target.pid, w[2]),
                    os.O_RDONLY | os.O_NONBLOCK) for w in writers.values()]
    try:
        while dump.poll() is None and time.monotonic() < deadline:
            for r in rfds:
                try:
                    os.read(r, 4096)
                except BlockingIOError:
                    pass
            time.sleep(0.01)
    finally:
        for r in rfds:
            os.close(r)
    out, err = dump.communicate(timeout=30)
    assert dump.returncode == 0, err
    doc = json.loads(out)
    assert doc["stats"]["attempts"] == 3, doc["stats"]
    for tid, wfd, _ in writers.values():
        t = thread_by_tid(doc, tid)
        assert t["left_running"] is None, t
