"""`run`'s causes for threads blocked reading a socket or a pipe whose
other end never sends (targets/socket_reads.py): before, "no likely
cause stands out" for an HTTP request to a server that never answers,
the commonest client hang.  Now a cause per thread names the fd and the
socket as the kernel has it (a TCP connection's addresses and state, a
UDP socket's address, a Unix socket), or the processes holding a pipe's
write end (a child whose output is read to its end, this process
itself), with the program's own line and its source; so is a connect()
the peer never answers (its handshake dropped).  The fds and
addresses are the interpreter's own (fileno(), getsockname(),
getpeername()).  A thread a cause of the wait-for graph names already
(joined, blocked in recv()) gets no second cause."""

import json
import os
import re
import shutil

import pytest

from conftest import (debian_with, interpreter_or_skip, marker_line,
                      target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("socket_reads.py")


def causes_of(causes, pid):
    """{headline: [details]} of process pid's causes."""
    out, head = {}, None
    for c in causes:
        if c.startswith("  process "):
            head = c if c.startswith("  process %d: " % pid) else None
            if head:
                out[head] = []
        elif head:
            out[head].append(c.strip())
    return out


def run_target(work, ident, script, *args, timeout="3"):
    """script under `run --report` on interpreter ident until it times
    out: its ready file, its process's causes ({headline: [details]}),
    the report, and the text run wrote (with each process's dump)."""
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", timeout, "--report", report, "--",
                         py.path, script, str(ready)] + list(args))
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    return (info, causes_of(likely_causes(res.stderr), info["pid"]),
            json.loads(report.read_text()), res.stderr)


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_socket_reads_are_causes(ident, work):
    info, causes, doc, _ = run_target(work, ident, SCRIPT)
    pid, tids, fds = info["pid"], info["tids"], info["fds"]
    # ("at least" unless a slow start had it move in the first sample)
    stuck = r" \(stuck for (at least )?[0-9.]+s\)$"

    def cause(name, what, marker, doing="reading", fd=None):
        fd = fds[name]["fd"] if fd is None else fd
        head = [h for h in causes if h.startswith(
            "  process %d: thread %d \"%s\" blocked %s fd %d, "
            % (pid, tids[name], name, doing, fd))]
        assert len(head) == 1, (name, causes)
        assert re.match(r"^  process %d: thread %d \"%s\" blocked %s "
                        r"fd %d, %s%s" % (pid, tids[name], name,
                                          re.escape(doing), fd,
                                          re.escape(what),
                                          stuck), head[0]), head
        detail = causes[head[0]]
        assert len(detail) == 1 and re.match(
            r"^at \S*socket_reads\.py:%d in \S+: .*# MARK: %s$"
            % (marker_line(SCRIPT, marker), marker), detail[0]), detail

    main = fds["MainThread"]
    cause("MainThread", "a TCP connection %s:%d -> %s:%d (established)"
          % (tuple(main["local"]) + tuple(main["remote"])), "read-http")
    cause("udp", "a UDP socket %s:%d" % tuple(fds["udp"]["local"]),
          "read-udp")
    cause("pair", "a Unix socket", "read-pair")
    cause("child", "a pipe whose write end is held by process %d (sleep) "
          "as fd 1" % info["child"], "read-child")
    cause("own", "a pipe whose write end is held by this process as fd %d"
          % fds["own"]["write"], "read-own")
    late = fds["connect"]
    cause("connect", "a TCP connection %s:%d -> %s:%d (syn_sent)"
          % (tuple(late["local"]) + tuple(late["remote"])), "read-connect",
          "connecting")
    reads = [h for h in causes if " blocked reading " in h]
    assert len(reads) == 5, causes
    # a server no client comes to waits by design: idle, ranked last
    head = [h for h in causes if re.match(
        r'^  process %d: idle: thread %d "accept" waits for a connection on '
        r'fd %d, a TCP listening socket %s:%d%s' % (
            pid, tids["accept"], fds["accept"]["fd"],
            fds["accept"]["local"][0], fds["accept"]["local"][1], stuck), h)]
    assert len(head) == 1, causes
    assert len(causes[head[0]]) == 1 and re.match(
        r"^at \S*socket_reads\.py:%d in accept: .*# MARK: read-accept$"
        % marker_line(SCRIPT, "read-accept"), causes[head[0]][0]), causes
    assert list(causes)[-1] == head[0], causes
    # select(), poll() (which a stop restarts as restart_syscall) and
    # epoll_wait() called by the program: their fds
    pair = "a Unix socket"
    cause("select", "a Unix socket; fd %d (to write), a Unix socket"
          % fds["select"]["write"], "read-select", "in select() on 2 fds:")
    cause("poll", "a Unix socket; fd %d, a pipe whose write end is held "
          "by this process as fd %d" % (fds["poll"]["fds"][1],
                                        fds["poll"]["write"]),
          "read-poll", "in poll() on 2 fds:", fds["poll"]["fds"][0])
    cause("epoll", pair, "read-epoll", "in epoll_wait() on")
    # the joined reader: the join's cause names it, with its C call
    joined = [h for h in causes if "waiting on threading.Thread" in h]
    assert len(joined) == 1 and any(
        d.startswith("joined: thread %d (reader) " % tids["reader"])
        for d in causes[joined[0]]), causes
    kinds = sorted((c["pid"], c["kind"]) for c in doc["causes"]
                   if re.search(" blocked (reading|connecting|in) ",
                                c["summary"]))
    assert kinds == [(pid, "read")] * 9, doc["causes"]


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_stdin_writer_outside(ident, work):
    """A program reading its stdin, a pipe whose write end a process
    outside the command holds (a CI runner, a shell pipeline's writer;
    here the test): the cause names that process (before, "a pipe")."""
    py = interpreter_or_skip(ident)
    script = target_script("stdin_reader.py")
    ready = work / "ready.json"
    r, w = os.pipe()
    try:
        res = coroscope_run(["--timeout", "3", "--", py.path, script,
                             str(ready)], stdin=r)
    finally:
        os.close(r)
        os.close(w)
    assert res.returncode == 124, res
    pid = json.loads(ready.read_text())["pid"]
    causes = causes_of(likely_causes(res.stderr), pid)
    head = [h for h in causes if " blocked reading fd 0 (its stdin), " in h]
    assert len(head) == 1, causes
    assert re.match(r"^  process %d: thread %d blocked reading fd 0 \(its "
                    r"stdin\), a pipe whose write end is held by process %d "
                    r"\(\S+\) as fd %d, not one of the command's processes "
                    r"\(stuck for " % (pid, pid, os.getpid(), w), head[0]), \
        head
    assert re.match(r"^at \S*stdin_reader\.py:%d in <module>: "
                    % marker_line(script, "stdin-read"),
                    causes[head[0]][0]), causes


@pytest.mark.parametrize("ident,both", (("3.6", ""), ("3.12", "both"),
                                        ("3.14", "")))
def test_grandchild_keeps_the_pipe(ident, both, work):
    """communicate() with a child that ended after starting a background
    process, which holds the output pipe open: the Popen's cause says
    the child ended and who holds the write end (before, only "1
    waiting on subprocess.Popen")."""
    script = target_script("grandchild_pipe.py")
    info, causes, _, stderr = run_target(work, ident, script, both)
    head = [h for h in causes if h.startswith(
        "  process %d: 1 waiting on subprocess.Popen " % info["pid"])]
    assert len(head) == 1, stderr[:3000]
    what = (r"in poll\(\) on 2 fds: fd \d+, a pipe whose write end is held "
            r"by process (\d+) \(sleep\) as fd 1; fd \d+, a pipe whose "
            r"write end is held by process \1 \(sleep\) as fd 2" if both
            else r"reading fd \d+, a pipe whose write end is held by process "
            r"\d+ \(sleep\) as fd 1")
    detail = causes[head[0]]
    assert re.match(r'^process %d ended, but thread %d "MainThread" blocked '
                    r"%s \(its output is read to the end: every process "
                    r"holding the write end must close it\)$"
                    % (info["child"], info["pid"], what), detail[0]), detail
    assert re.match(r"^thread %d \(MainThread\) at grandchild_pipe\.py:%d "
                    % (info["pid"], marker_line(script,
                                                "grandchild-communicate")),
                    detail[1]), detail


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_stream_reader_waits(ident, work):
    """A task in asyncio's StreamReader.readline() waits for the reader,
    whose transport's socket the dump names by fd (the wait-for graph's
    object, JSON "fd" and "server_side"), and `run`'s cause by its
    addresses.  A client's wait is a cause of its own (before, "stuck
    task: Task-1 waits on Future"); a server's handler waiting for its
    client is the server's rest, ranked with the idle causes."""
    script = target_script("aio_streams.py")
    info, causes, doc, _ = run_target(work, ident, script)
    pid, fds = info["pid"], info["fds"]
    for name, idle in (("client", ""), ("handler", "idle: ")):
        fd = fds[name]["fd"]
        state = "fd %d" % fd + (", a server's connection" if idle else "")
        head = [h for h in causes if re.match(
            r"^  process %d: %s1 waiting on asyncio\.StreamReader "
            r"0x[0-9a-f]+ \(%s\)$" % (pid, idle, re.escape(state)), h)]
        assert len(head) == 1, (name, causes)
        detail = causes[head[0]]
        assert detail[0] == ("fd %d: a TCP connection %s:%d -> %s:%d "
                             "(established)" % (
                                 (fd,) + tuple(fds[name]["local"]) +
                                 tuple(fds[name]["remote"]))), detail
        assert re.match(r"^task \S+ at aio_streams\.py:%d in \S+ "
                        % marker_line(script, name + "-reads"),
                        detail[1]), detail
    order = [h for h in causes if "asyncio.StreamReader" in h]
    assert " idle: " in order[1], order
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    readers = sorted((n["fd"], n["server_side"]) for n in
                     proc["graph"]["nodes"]
                     if n.get("type") == "asyncio.StreamReader")
    assert readers == sorted([(fds["client"]["fd"], False),
                              (fds["handler"]["fd"], True)]), readers


def test_trio_socket_waits(work):
    """A trio task parked on a socket (trio's I/O manager waiting for
    its fd): its stuck-task cause says the trio socket method it is in
    and the fd (before, "parked in _make_simple_sock_method_wrapper.
    <locals>.wrapper"), and names the socket as the process's tables
    have it; the dump's task tree gives the fd.  A listening socket is
    said as one (before, "a TCP connection L -> 0.0.0.0:0 (listen, 3
    bytes unread)": its backlog taken for bytes).  Alike tasks, each on
    a socket of its own, are one cause, without the fds.  On Debian's
    3.11, the only interpreter with trio here."""
    debian_with("trio")
    script = target_script("trio_sockets.py")
    info, causes, doc, text = run_target(work, "3.11-debian", script)
    fds = info["fds"]
    tasks = {t["name"]: t for p in doc["processes"] if p["pid"] ==
             info["pid"] for t in p["tasks"]}
    for name, call, what in (
            ("client", "recv", "a TCP connection %s:%d -> %s:%d "
             "(established)" % (tuple(fds["client"]["local"]) +
                                tuple(fds["client"]["remote"]))),
            ("pair", "recv", "a Unix socket")):
        fd = fds[name]["fd"]
        head = [h for h in causes if re.match(
            r"^  process %d: stuck trio task: __main__\.%s parked in a "
            r"trio socket's %s, to read fd %d, stuck for at least "
            % (info["pid"], name, call, fd), h)]
        assert len(head) == 1, (name, causes)
        detail = causes[head[0]]
        assert re.match(r"^task __main__\.%s at \S*trio_sockets\.py:%d in "
                        r"%s$" % (name, marker_line(script, "trio-" + name),
                                  name), detail[0]), detail
        assert detail[1] == "fd %d: %s" % (fd, what), detail
        # the dump's task tree says the fd too, and its JSON
        assert re.search(r"\(T\) __main__\.%s 0x[0-9a-f]+ pending \[trio\], "
                         r"to read fd %d\n" % (name, fd), text), text
        assert tasks["__main__." + name]["fd"] == {"fd": fd, "for": "read"}, \
            tasks
    # a listening socket: no "connection", its backlog no bytes
    fd = fds["listener"]["fd"]
    head = [h for h in causes if re.match(
        r"^  process %d: stuck trio task: __main__\.listener parked in a "
        r"trio socket's accept, to read fd %d, " % (info["pid"], fd), h)]
    assert len(head) == 1, causes
    assert causes[head[0]][1] == "fd %d: a TCP listening socket %s:%d" % (
        (fd,) + tuple(fds["listener"]["local"])), causes[head[0]]
    # alike tasks, each on a socket of its own, are one cause
    info, causes, _, _ = run_target(work, "3.11-debian", script, "alike")
    head = [h for h in causes if re.match(
        r"^  process %d: 3 stuck trio tasks parked in a trio socket's "
        r"recv, to read, stuck for at least [0-9.]+s.*: "
        r"\"__main__\.alike\"" % info["pid"], h)]
    assert len(head) == 1, causes


def test_http_clients_name_their_socket(work):
    """An asyncio task waiting for a response through httpx (anyio's
    SocketStream, an Event of its protocol's) or aiohttp (its response
    handler's DataQueue): the cause names the connection it reads, as
    the server's accepted socket sees it (before, an Event or a Future
    and nothing of the socket), and the dump's task tree gives the fd.
    On Debian's 3.11, the interpreter with both."""
    debian_with("httpx", "aiohttp")
    script = target_script("http_clients.py")
    info, causes, doc, text = run_target(work, "3.11-debian", script)
    server = "%s:%d" % tuple(info["server"])
    peers = {"%s:%d" % tuple(p) for p in info["peers"]}
    found = {}
    for head, details in causes.items():
        for d in details:
            m = re.match(r"^fd \d+: a TCP connection (\S+) -> %s "
                         r"\(established\)$" % re.escape(server), d)
            if m:
                found[m.group(1)] = (head, details)
    assert set(found) == peers, causes
    heads = {h for h, _ in found.values()}
    assert any(" waiting on asyncio.Event " in h for h in heads), heads
    assert any(": stuck task: " in h for h in heads), heads
    # the dump's task tree: the two tasks gather() runs, each on its fd;
    # in JSON too
    assert len(re.findall(r"\(T\) \S+ 0x[0-9a-f]+ pending, .*, to read "
                          r"fd \d+\n", text)) == 2, text
    proc = [p for p in doc["processes"] if p["pid"] == info["pid"]][0]
    assert sorted(t["fd"]["for"] for t in proc["tasks"] if "fd" in t) == \
        ["read", "read"], proc["tasks"]
    for marker in ("httpx-get", "aiohttp-get"):
        line = "http_clients.py:%d in " % marker_line(script, marker)
        assert any(line in d for _, ds in found.values() for d in ds), \
            (marker, found)


@pytest.mark.not_sanitized("on 3.12, which the sanitizer pass leaves out")
@pytest.mark.parametrize("ns", (False, True), ids=("same", "pid-namespace"))
def test_waitpid_names_the_child(ns, work):
    """A thread in a bare os.waitpid() waits for the child it names: its
    command as /proc has it where the target's PID namespace is ours;
    in another (unshare --pid), only that the pid is the namespace's
    (before the review's fix, the pid was looked up here: "child process
    2 (kthreadd)")."""
    py = interpreter_or_skip("3.12")
    script = target_script("waitpid_child.py")
    ready = work / "ready.json"
    prefix = []
    if ns:
        if not shutil.which("unshare"):
            pytest.skip("unshare(1) is not installed")
        prefix = ["unshare", "--pid", "--fork"]
    res = coroscope_run(["--timeout", "3", "--"] + prefix +
                        [py.path, script, str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    what = "(a pid of its PID namespace)" if ns else "(sleep)"
    heads = [c for c in likely_causes(res.stderr) if re.match(
        r'^  process \d+: thread \d+ "MainThread" waits for child process '
        r'%d %s to end \(stuck for at least [0-9.]+s\)$'
        % (info["child"], re.escape(what)), c)]
    assert len(heads) == 1, res.stderr[:3000]


def test_task_socket_named_after_main_thread_exits(work):
    """A trio task's socket, in a process whose main thread has exited:
    its files are read under a live thread's /proc entry (before, the
    task's cause had no "fd 9: ..." line then)."""
    debian_with("trio")
    info, causes, _, _ = run_target(work, "3.11-debian",
                                    target_script("trio_main_exits.py"))
    head = [h for h in causes if "stuck trio task: " in h and
            "to read fd %d" % info["fd"] in h]
    assert len(head) == 1, causes
    assert ("fd %d: a TCP connection %s:%d -> %s:%d (established)"
            % ((info["fd"],) + tuple(info["local"]) +
               tuple(info["remote"]))) in causes[head[0]], causes[head[0]]


JOINS = target_script("joins_a_reader.py")


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_a_joined_reader_names_its_socket(ident, work):
    """The main thread joins a thread blocked in recv()
    (targets/joins_a_reader.py): the join's cause said of the reader
    only "in C: __libc_recv()", where a thread blocked so on its own
    gets "blocked reading fd 4, a TCP connection ..." (a helper's user
    round).  The reader's line under the join names the socket too."""
    info, causes, _, stderr = run_target(work, ident, JOINS)
    heads = [h for h in causes if "waiting on threading.Thread" in h]
    assert len(heads) == 1, stderr[:3000]
    assert ("thread %d (poller) blocked reading fd %d, a Unix socket"
            % (info["tid"], info["fd"])) in causes[heads[0]], causes
