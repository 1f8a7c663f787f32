"""`watch` says what a stuck thread waits for as the kernel has it, in
run's words, read once when the thread is first seen stuck: the socket
it reads (targets/socket_reads.py: an HTTP request to a server that
never answers), a pipe and who holds its write end, a file lock and its
holder (targets/file_locks.py), the child it waits to end.  Before,
its line said where it was and, with --native, "blocked in io
(__libc_recv)"; nothing of the peer or the holder.  The fds, addresses
and pids are the target's own (fileno(), getsockname(), os.getpid(),
the holders' reports)."""

import os
import re

import pytest

from conftest import (debian_with, interpreter, left_out, marker_line,
                      run_coroscope, target_script)
from test_watch import assert_target_unharmed, by_name

ARGS = ["--json", "--for", "3s", "--interval", "0.5s", "--stuck", "1s"]


def watch(keeper, ident, script, *args):
    """script under interpreter ident, watched: the target, the JSON
    document's threads by name, its stderr (the event lines), and the
    document."""
    if left_out(ident):
        pytest.skip("interpreter %s left out by COROSCOPE_TEST_PYTHONS"
                    % ident)
    interp = interpreter(ident)
    if interp is None:
        pytest.skip("interpreter %s is not installed here" % ident)
    target = keeper.start_target(interp, script, *args)
    result = run_coroscope("watch", *(ARGS + [target.pid]))
    assert result.returncode == 0, result
    assert_target_unharmed(target)
    doc = result.json()
    return target, by_name(doc["threads"]), result.stderr, doc


def event(stderr, tid, name):
    """The stuck event line of thread tid (on stderr with --json)."""
    lines = [l for l in stderr.splitlines()
             if " stuck thread %d '%s' for " % (tid, name) in l]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("ident", ("3.8", "3.11-debian", "3.14t"))
def test_stuck_reader_names_its_socket_and_pipe(keeper, ident):
    target, threads, stderr, _ = watch(keeper, ident, "socket_reads.py")
    fds = target.ready["fds"]
    main = fds["MainThread"]
    want = {
        "MainThread": "blocked reading fd %d, a TCP connection %s:%d -> "
                      "%s:%d (established)" % (
                          (main["fd"],) + tuple(main["local"]) +
                          tuple(main["remote"])),
        "own": "blocked reading fd %d, a pipe whose write end is held by "
               "this process as fd %d" % (fds["own"]["fd"],
                                          fds["own"]["write"]),
        "udp": "blocked reading fd %d, a UDP socket %s:%d"
               % ((fds["udp"]["fd"],) + tuple(fds["udp"]["local"])),
    }
    for name, text in want.items():
        thread = threads[name]
        assert thread["state"] == "stuck", thread
        assert thread["blocked_on"] == text, thread
        assert event(stderr, thread["tid"], name).endswith(", " + text)
    # a thread joining another waits on no fd: nothing said
    assert threads["joiner"]["blocked_on"] is None, threads["joiner"]


@pytest.mark.parametrize("ident", ("3.8", "3.11-debian", "3.14t"))
def test_stuck_file_lock_names_its_holder(keeper, ident):
    target, threads, stderr, _ = watch(keeper, ident, "file_locks.py",
                                       "{workdir}")
    ready = target.ready
    held = ready["holders"]["py_flock"]
    text = ("blocked locking fd %d, %s, with flock(): held exclusively by "
            "process %d (" % (ready["fds"]["py_flock"],
                              os.path.join(target.workdir, "a.lock"),
                              held["pid"]))
    thread = threads["py_flock"]
    assert thread["blocked_on"].startswith(text), thread
    assert thread["blocked_on"].endswith(") as its fd %d" % held["fd"]), \
        thread
    assert ", " + text in event(stderr, thread["tid"], "py_flock")
    assert threads["self"]["blocked_on"] == (
        "blocked locking fd %d, %s, with flock(): held exclusively by this "
        "process itself as fd %d" % (
            ready["fds"]["self"], os.path.join(target.workdir, "d.lock"),
            ready["fds"]["self_held"])), threads["self"]
    # the main thread waits in subprocess.run() for its child to end
    assert re.match(r"^waits for child process \d+ \(python[0-9.t]*\) to "
                    r"end$", threads["MainThread"]["blocked_on"] or ""), \
        threads["MainThread"]



def by_line(items, script, marker):
    """The one item whose "where" is at marker's line of script."""
    line = marker_line(target_script(script), marker)
    found = [i for i in items if i["where"] and i["where"]["line"] == line]
    assert len(found) == 1, (marker, items)
    return found[0]


def connection(fds, name, doing="read"):
    return "to %s fd %d, a TCP connection %s:%d -> %s:%d (established)" % (
        (doing, fds[name]["fd"]) + tuple(fds[name]["local"]) +
        tuple(fds[name]["remote"]))


@pytest.mark.parametrize("ident", ("3.8", "3.11-debian", "3.14t"))
def test_stuck_stream_task_names_its_socket(keeper, ident):
    """An asyncio task in StreamReader.readline(): its fd is the wait-for
    graph's StreamReader's."""
    target, _, stderr, doc = watch(keeper, ident, "aio_streams.py")
    fds = target.ready["fds"]
    for name in ("client", "handler"):
        task = by_line(doc["tasks"], "aio_streams.py", name + "-reads")
        assert task["state"] == "stuck", task
        assert task["blocked_on"] == connection(fds, name), task
        lines = [l for l in stderr.splitlines() if " stuck task " in l and
                 "aio_streams.py:%d " % task["where"]["line"] in l]
        assert len(lines) == 1 and ", %s, waits on " % connection(
            fds, name) in lines[0], (lines, stderr)


def test_stuck_gevent_greenlets_name_their_sockets(keeper):
    """Greenlets parked in gevent sockets' methods (readers/gevent_io.c);
    the resolver threadpool's worker greenlets are idle, as their
    threads are."""
    debian_with("gevent")
    target, _, stderr, doc = watch(keeper, "3.11-debian",
                                   "gevent_sockets.py")
    fds = target.ready["fds"]
    for name, marker, text in (
            ("fetch", "recv", connection(fds, "fetch")),
            ("sender", "send", connection(fds, "sender", "write")),
            ("listener", "accept", "to read fd %d, a TCP listening socket "
             "%s:%d" % ((fds["listener"]["fd"],) +
                        tuple(fds["listener"]["local"])))):
        greenlet = by_line(doc["greenlets"], "gevent_sockets.py", marker)
        assert greenlet["state"] == "stuck", greenlet
        assert greenlet["blocked_on"] == text, greenlet
    workers = [g for g in doc["greenlets"] if g["type"] == "_WorkerGreenlet"
               or (g["where"] and g["where"]["function"] and
                   g["where"]["function"].endswith("_begin"))]
    assert workers and all(g["state"] == "idle" for g in workers), workers
    assert not [l for l in stderr.splitlines()
                if " stuck " in l and "_WorkerGreenlet" in l], stderr
