"""`run`'s causes where a chain of waits ends at a thread that waits on
nothing the wait-for graph sees (targets/chain_ends.py).

A thread joining a thread blocked in recv(), and a thread in
Future.result() of a ThreadPoolExecutor job asleep in time.sleep():
before, the join was in no cause at all ("no likely cause stands out"
when it was the only one) and the result() only a generic "waits in
Future.result".  Now each is a cause naming the end of its chain, at
its line, with what it is in: the C call its native stack is blocked
in (glibc's recv(), whatever its symbol's prefix) or its sleep's end.
A lock's holder blocked in recv() says that call too.
"""

import json
import re

import pytest

from conftest import (DEBIAN, debian_with, interpreter_or_skip, marker_line,
                      target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("chain_ends.py")


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_chain_ends_are_causes(ident, work):
    py = interpreter_or_skip(ident)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", py.path, SCRIPT,
                         str(ready)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    tids = info["tids"]
    causes = likely_causes(res.stderr)
    text = "\n".join(causes)

    def cause(head):
        i = [k for k, c in enumerate(causes) if c.startswith("  process ")
             and head in c]
        assert len(i) == 1, (head, text)
        out = [causes[i[0]]]
        for c in causes[i[0] + 1:]:
            if c.startswith("  process "):
                break
            out.append(c)
        return out

    line = lambda m: marker_line(SCRIPT, m)  # noqa: E731
    joined = cause("1 waiting on threading.Thread ")
    assert joined[0].endswith(" for thread %d (reader) at chain_ends.py:%d "
                              "in reader" % (tids["reader"],
                                             line("chain-recv"))), joined
    m = re.match(r"      joined: thread %d \(reader\) at chain_ends\.py:%d "
                 r"in reader \(stuck for [^)]*\), in C: (\S*recv\S*)\(\): "
                 r"ours\.recv\(10\)  # MARK: chain-recv$"
                 % (tids["reader"], line("chain-recv")), joined[1])
    assert m, joined
    assert joined[2].startswith("      thread %d (joiner) at chain_ends.py:%d "
                                "in joiner " % (tids["joiner"],
                                                line("chain-join"))), joined
    job = cause("1 waiting on concurrent.futures.Future ")
    assert " (running) for thread %d " % tids["worker"] in job[0], job
    assert re.match(r"      running its job: thread %d \(\S+\) at "
                    r"chain_ends\.py:%d in job \(stuck for [^)]*\), sleeps "
                    r"in time\.sleep, wakes in 89\d\.\ds: time\.sleep\(900\)"
                    % (tids["worker"], line("chain-job")), job[1]), job
    assert job[2].startswith("      thread %d (asker) at chain_ends.py:%d in "
                             "asker " % (tids["asker"], line("chain-result"))), \
        job
    # a holder blocked in C says the call too
    held = cause("1 waiting on threading.Lock ")
    assert re.match(r"      holder thread %d \(holder\) at chain_ends\.py:%d "
                    r"in holder \(stuck for [^)]*\), in C: \S*recv\S*\(\): "
                    r"mine\.recv\(10\)  # MARK: chain-holder$"
                    % (tids["holder"], line("chain-holder")), held[1]), held
    # the asker's wait is this cause, not a generic one
    assert not any("waits in Future.result" in c for c in causes), text



def run_debian(work, name):
    """Target name under `run` on Debian's python3.11, timed out: its
    path, its ready file's contents and run's causes."""
    script = target_script(name)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", DEBIAN, script,
                         str(ready)])
    assert res.returncode == 124, res
    return script, json.loads(ready.read_text()), likely_causes(res.stderr)


def test_gevent_reader_at_own_line(work):
    """A greenlet parked in a gevent socket's recv() is named at the
    program's own line, gevent's frame after it as the innermost (before,
    only gevent's _socketcommon.py line)."""
    debian_with("gevent")
    script, _, causes = run_debian(work, "chain_ends_gevent.py")
    parked = [c for c in causes if " parked at " in c]
    assert len(parked) == 1, causes
    assert re.search(r": greenlet parked at %s:%d in reader \(innermost "
                     r"\S+/gevent/_socketcommon\.py:\d+ in \S*recv\)$"
                     % (re.escape(script), marker_line(script, "gevent-recv")),
                     parked[0]), parked


def test_trio_to_thread_followed(work):
    """A trio task in to_thread.run_sync() is followed to the worker
    thread running its job, with the C call that job is blocked in, as
    an asyncio task's run_in_executor() is (before, the cause stopped at
    the task)."""
    debian_with("trio")
    script, ready, causes = run_debian(work, "chain_ends_trio.py")
    tids = ready["tids"]
    head = [i for i, c in enumerate(causes)
            if c.startswith("  process ") and "stuck trio task: " in c and
            " parked in to_thread_run_sync" in c]
    assert len(head) == 1, causes
    details = causes[head[0] + 1:head[0] + 3]
    assert details[0].strip().startswith(
        "task __main__.threaded at %s:%d in threaded"
        % (script, marker_line(script, "trio-to-thread"))), details
    assert re.match(r'      its job runs in thread %d "[^"]+" at \S+ in \S+, '
                    r"in C: \S*recv\S*\(\)$" % tids["worker"],
                    details[1]), details
