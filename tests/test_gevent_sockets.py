"""`run` and `dump` name the socket a greenlet parked in a gevent
socket's method waits on (targets/gevent_sockets.py, monkey-patched as
gevent programs run): its fd, from the stdlib C socket the gevent
socket wraps, and, in run's cause, the socket as the kernel has it.
Before, the cause said only where the greenlet was parked, "(innermost
.../gevent/_socketcommon.py:663 in SocketMixin.recv)".  The fds and
addresses are the target's own (fileno(), getsockname(),
getpeername())."""

import json
import re

from conftest import DEBIAN, debian_with, marker_line, target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401
from test_run_reads import causes_of

SCRIPT = target_script("gevent_sockets.py")


def test_gevent_socket_waits_name_their_socket(work):
    debian_with("gevent")
    ready, report = work / "ready.json", work / "report.json"
    # (4 s: a clean clone's loaded release pass once found no cause
    # naming the WSGI server's serve_forever() with 3 s, sampled from
    # 1.5 s, gevent's import and the server's start a part of that)
    res = coroscope_run(["--timeout", "4", "--report", report, "--",
                         DEBIAN, SCRIPT, str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    pid, fds = info["pid"], info["fds"]
    causes = causes_of(likely_causes(res.stderr), pid)

    def cause(name, method, doing, marker, fd=None):
        fd = fds[name]["fd"] if fd is None else fd
        head = [h for h in causes if re.match(
            r"^  process %d: greenlet parked at \S*gevent_sockets\.py:%d "
            r"in %s \(innermost \S+/gevent/_socket(common|3)\.py:\d+ in "
            r"\S*\.%s\), to %s fd %s$"
            % (pid, marker_line(SCRIPT, marker), name, method, doing, fd),
            h)]
        assert len(head) == 1, (name, causes)
        return head[0], causes[head[0]]

    def addr(a):
        return "%s:%d" % tuple(a)

    # A listener's accept() is a server's rest, as a thread's: idle,
    # ranked after the others (before, a cause like theirs, often first)
    heads = list(causes)
    idle = [h for h in heads if re.match(
        r"^  process %d: idle: greenlet parked at \S*gevent_sockets\.py:%d "
        r"in listener \(innermost \S+/gevent/_socket3\.py:\d+ in "
        r"socket\.accept\), waits for a connection on fd %d$"
        % (pid, marker_line(SCRIPT, "accept"), fds["listener"]["fd"]), h)]
    assert len(idle) == 1, causes
    assert causes[idle[0]][0] == "fd %d: a TCP listening socket %s" % (
        fds["listener"]["fd"], addr(fds["listener"]["local"])), causes
    assert all(heads.index(cause(*c)[0]) < heads.index(idle[0])
               for c in (("fetch", "recv", "read", "recv"),
                         ("sender", "send", "write", "send"))), heads
    # So is gevent's WSGI server's serve_forever() on its stop event:
    # idle, the greenlet no cause of its own
    served = [h for h in heads if "serve_forever" in h or any(
        "serve_forever" in d for d in causes[h])]
    assert len(served) == 1 and re.match(
        r"^  process %d: idle: 1 waiting on gevent\.event\.Event " % pid,
        served[0]), causes
    for name, method, doing, marker in (("fetch", "recv", "read", "recv"),
                                        ("sender", "send", "write", "send")):
        _, detail = cause(name, method, doing, marker)
        assert re.match(r"^fd %d: a TCP connection %s -> %s \(established"
                        % (fds[name]["fd"], re.escape(addr(fds[name]["local"])),
                           re.escape(addr(fds[name]["remote"]))),
                        detail[0]), detail
    _, detail = cause("http", "recv_into", "read", "http", fd=r"(\d+)")
    assert re.match(r"^fd \d+: a TCP connection 127\.0\.0\.1:\d+ -> %s "
                    r"\(established\)$" % re.escape(addr(fds["http"]["remote"])),
                    detail[0]), detail

    doc = json.loads(report.read_text())
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    got = {g["function"]: g.get("fd") for g in proc["greenlets"]
           if g["function"] in ("listener", "fetch", "sender")}
    assert got == {"listener": {"fd": fds["listener"]["fd"], "for": "read"},
                   "fetch": {"fd": fds["fetch"]["fd"], "for": "read"},
                   "sender": {"fd": fds["sender"]["fd"], "for": "write"}}, got
    # the dump's text says it too, after the greenlet's head
    assert re.search(r"suspended Greenlet running fetch\(\) 0x[0-9a-f]+, "
                     r"to read fd %d\n" % fds["fetch"]["fd"],
                     res.stderr), res.stderr[-3000:]
    # the resolver's threadpool (urllib's getaddrinfo): each worker
    # thread's first greenlet waits in _begin() for good, idle by design
    # (before, each was listed stuck there)
    assert not re.search(r"stuck .* in _WorkerGreenlet\._begin",
                         res.stderr), res.stderr[:4000]
    assert re.search(r"^  process %d: \d+ idle by design, not listed: .*a "
                     r"gevent threadpool worker thread's first greenlet "
                     r"\(\d+\)" % pid, res.stderr, re.M), res.stderr[:4000]
