"""`run`'s causes for threads blocked reading a socket whose other end
never sends (targets/socket_reads.py): before, "no likely cause stands
out" for an HTTP request to a server that never answers, the commonest
client hang.  Now a cause per thread names the fd and the socket as the
kernel has it (a TCP connection's addresses and state, a UDP socket's
address, a Unix socket), with the program's own line and its source.
The fds and addresses are the interpreter's own (fileno(),
getsockname(), getpeername()).  A thread a cause of the wait-for graph
names already (joined, blocked in recv()) gets no second cause."""

import json
import re

import pytest

from conftest import interpreter_or_skip, marker_line, target_script
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


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_socket_reads_are_causes(ident, work):
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", "3", "--report", report, "--",
                         py.path, SCRIPT, str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    pid, tids, fds = info["pid"], info["tids"], info["fds"]
    causes = causes_of(likely_causes(res.stderr), pid)
    stuck = r" \(stuck for at least [0-9.]+s\)$"

    def cause(name, what, marker):
        head = [h for h in causes if h.startswith(
            "  process %d: thread %d \"%s\" blocked reading fd %d, "
            % (pid, tids[name], name, fds[name]["fd"]))]
        assert len(head) == 1, (name, causes)
        assert re.match(r"^  process %d: thread %d \"%s\" blocked reading "
                        r"fd %d, %s%s" % (pid, tids[name], name,
                                          fds[name]["fd"], re.escape(what),
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
    reads = [h for h in causes if " blocked reading " in h]
    assert len(reads) == 3, causes
    # the joined reader: the join's cause names it, with its C call
    joined = [h for h in causes if "waiting on threading.Thread" in h]
    assert len(joined) == 1 and any(
        d.startswith("joined: thread %d (reader) " % tids["reader"])
        for d in causes[joined[0]]), causes
    doc = json.loads(report.read_text())
    kinds = sorted((c["pid"], c["kind"]) for c in doc["causes"]
                   if " blocked reading " in c["summary"])
    assert kinds == [(pid, "read")] * 3, doc["causes"]
