"""`run`'s causes where a chain of waits ends at a thread that waits on
nothing the wait-for graph sees (targets/chain_ends.py).

A thread joining a thread blocked in recv(), and a thread in
Future.result() of a ThreadPoolExecutor job asleep in time.sleep():
before, the join was in no cause at all ("no likely cause stands out"
when it was the only one) and the result() only a generic "waits in
Future.result".  Now each is a cause naming the end of its chain, at
its line, with what it is in: the C call its native stack is blocked
in (glibc's recv(), whatever its symbol's prefix) or its sleep's end.
A lock's holder blocked in recv() says that call too.  A job queued
behind the job of its pool's one worker, asleep, ends its chain at that
worker (before, "waits in Future.result").  A thread waiting for the
job of a worker blocked on an Event, and a thread joining that one, are
named under the Event's cause, each with whom it waits for (before,
"waits in Future.result" and nothing for the join).
"""

import json
import re

import pytest

from conftest import (DEBIAN, debian_with, interpreter_or_skip, marker_line,
                      target_script)
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("chain_ends.py")


def run_target(work, python, name, *args):
    """Target name under `run` on python, timed out: its path, its ready
    file's contents and run's causes."""
    script = target_script(name)
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", python, script,
                         str(ready)] + list(args))
    assert res.returncode == 124, res
    return script, json.loads(ready.read_text()), likely_causes(res.stderr)


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14"))
def test_chain_ends_are_causes(ident, work):
    py = interpreter_or_skip(ident)
    _, info, causes = run_target(work, py.path, "chain_ends.py")
    tids = info["tids"]
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
    # what the reader reads (the socket's, fd and kind)
    assert re.match(r"      thread %d \(reader\) blocked reading fd \d+, a "
                    r"Unix socket$" % tids["reader"], joined[2]), joined
    assert joined[3].startswith("      thread %d (joiner) at chain_ends.py:%d "
                                "in joiner " % (tids["joiner"],
                                                line("chain-join"))), joined
    job = cause(" (running) for thread %d " % tids["worker"])
    assert "1 waiting on concurrent.futures.Future " in job[0], job
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
    # a job queued behind the worker's: the worker, on another job
    queued = cause(" (pending) queued for its pool's one worker, thread %d "
                   % tids["worker"])
    assert queued[0].startswith("  process %d: 1 waiting on concurrent."
                                "futures.Future " % info["pid"]), queued
    assert re.match(r"      its pool's worker, on another job: thread %d "
                    r"\(\S+\) at chain_ends\.py:%d in job \(stuck for "
                    r"[^)]*\), sleeps in time\.sleep, wakes in 89\d\.\ds: "
                    % (tids["worker"], line("chain-job")), queued[1]), queued
    assert queued[2].startswith("      thread %d (queued) at chain_ends.py:%d "
                                "in queued " % (tids["queued"],
                                                line("chain-queued"))), queued
    # behind a worker waiting on an Event: the thread waiting for its
    # job, and the thread joining that thread, in the Event's cause
    gate = cause("1 waiting on threading.Event ")
    assert gate[0].endswith("; 3 blocked behind it in all"), gate
    assert gate[1].startswith("      thread %d (ThreadPoolExecutor-"
                              % tids["worker2"]), gate
    assert ("at chain_ends.py:%d in gated " % line("chain-gate")
            in gate[1]), gate
    assert re.match(r"      waiting for the job of thread %d \(\S+\): "
                    r"thread %d \(asker2\) at chain_ends\.py:%d in asker2 "
                    % (tids["worker2"], tids["asker2"], line("chain-gated")),
                    gate[2]), gate
    assert re.match(r"      joining thread %d \(asker2\): thread %d "
                    r"\(joiner2\) at chain_ends\.py:%d in joiner2 "
                    % (tids["asker2"], tids["joiner2"], line("chain-join2")),
                    gate[3]), gate
    assert len(gate) == 4, gate
    assert not any("asker2" in c or "joiner2" in c for c in causes
                   if c.startswith("  process ")), text
    # the asker's and the queued wait are these causes, not generic ones
    assert not any("waits in Future.result" in c for c in causes), text



def test_gevent_reader_at_own_line(work):
    """A greenlet parked in a gevent socket's recv() is named at the
    program's own line, gevent's frame after it as the innermost (before,
    only gevent's _socketcommon.py line), and the socket's fd (test_gevent_
    sockets.py has the socket's description)."""
    debian_with("gevent")
    script, ready, causes = run_target(work, DEBIAN, "chain_ends_gevent.py")
    parked = [c for c in causes if " parked at " in c]
    assert len(parked) == 1, causes
    assert re.search(r": greenlet parked at %s:%d in reader \(innermost "
                     r"\S+/gevent/_socketcommon\.py:\d+ in \S*recv\), to "
                     r"read fd %d$"
                     % (re.escape(script), marker_line(script, "gevent-recv"),
                        ready["fd"]), parked[0]), parked


@pytest.mark.parametrize("ident,mode", [("3.6", "asyncio"),
                                        ("3.12", "asyncio"),
                                        ("3.14", "asyncio"),
                                        ("3.11-debian", "gevent")])
def test_a_holder_names_the_socket_it_reads(ident, mode, work):
    """A lock's holder parked reading a socket (a task in a StreamReader,
    a greenlet in a gevent socket's recv()): the lock's cause names the
    socket under the holder's line, as a thread holder's says its C
    call (before, nothing said what the holder waited for)."""
    py = interpreter_or_skip(ident)
    if mode == "gevent":
        debian_with("gevent")
    script, ready, causes = run_target(work, py.path, "holder_reads.py",
                                       mode)
    lock = [k for k, c in enumerate(causes) if c.startswith("  process ")
            and ("waiting on asyncio.Lock" in c or
                 "waiting on gevent.lock.Semaphore" in c)]
    assert len(lock) == 1, causes
    at = [k for k in range(lock[0] + 1, len(causes))
          if causes[k].strip().startswith("holder ")]
    assert at and "holder_reads.py:%d in " % marker_line(
        script, mode + "-holder-reads") in causes[at[0]], causes
    assert causes[at[0] + 1].strip().startswith(
        "fd %d: a Unix socket" % ready["fd"]), causes


def test_trio_to_thread_followed(work):
    """A trio task in to_thread.run_sync() is followed to the worker
    thread running its job, with the C call that job is blocked in, as
    an asyncio task's run_in_executor() is (before, the cause stopped at
    the task)."""
    debian_with("trio")
    script, ready, causes = run_target(work, DEBIAN, "chain_ends_trio.py")
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


@pytest.mark.parametrize("ident", ("3.6", "3.12"))
def test_chain_goes_on_is_no_cause(ident, work):
    """No join cause for a thread the samples saw moving (it is no hang),
    and no cause per job for a wait on the first of several jobs: the
    waits stay as they were (the jobs' threads then listed as stuck).  A
    join of a server's listener is an idle cause, ranked last; a busy
    thread's own cause names who joins it."""
    py = interpreter_or_skip(ident)
    script, info, causes = run_target(work, py.path, "chain_goes_on.py")
    tids = info["tids"]
    text = "\n".join(causes)
    assert "(mover)" not in text, text
    assert "waiting on concurrent.futures.Future" not in text, text
    assert "running its job:" not in text, text
    # the busy thread's own cause names who joins it
    busy = [i for i, c in enumerate(causes) if c.startswith(
        '  process %d: thread %d "cruncher" is busy, ' % (info["pid"],
                                                         tids["cruncher"]))]
    assert len(busy) == 1, text
    assert causes[busy[0] + 1] == (
        '      joined by thread %d "cjoin" at %s:%d in cjoin: t.join()  '
        '# MARK: goes-on-cjoin' % (tids["cjoin"], script,
                                   marker_line(script, "goes-on-cjoin"))), \
        causes[busy[0]:busy[0] + 2]
    # joining a server's listener: an idle cause, ranked last
    heads = [c for c in causes if c.startswith("  process ")]
    assert heads and heads[-1].endswith(
        ": idle: 1 waiting on threading.Thread 0x%s for thread %d (listener) "
        "at %s" % (re.search(r"Thread 0x([0-9a-f]+)", heads[-1]).group(1),
                   tids["listener"],
                   heads[-1].rsplit(" at ", 1)[1])), heads
    # the first-of wait is still said, once, at its line
    said = [c for c in causes if "%d" % tids["first"] in c or
            "goes-on-first" in c]
    assert said, text


@pytest.mark.parametrize("ident,pool", (("3.6", ""), ("3.12", ""),
                                        ("3.14", ""), ("3.6", "pool"),
                                        ("3.12", "pool")))
def test_exit_waits_for_a_thread(ident, pool, work):
    """The main code ended; the interpreter's exit joins a thread, not a
    daemon, waiting on a queue: the queue's cause names the main thread
    behind it, at the exit.  An executor's worker running a job is
    joined by concurrent.futures' atexit hook before 3.9."""
    py = interpreter_or_skip(ident)
    script = target_script("exit_waits.py")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", py.path, script,
                         str(ready), pool])
    assert res.returncode == 124, res
    info, causes = json.loads(ready.read_text()), likely_causes(res.stderr)
    pid, worker = info["pid"], info["tids"]["worker"]
    head = [i for i, c in enumerate(causes)
            if c.startswith("  process %d: 1 waiting on queue.Queue " % pid)]
    assert len(head) == 1, causes
    assert re.match(r"      thread %d \(\S+\) at exit_waits\.py:%d in worker "
                    % (worker, marker_line(script, "exit-worker")),
                    causes[head[0] + 1]), causes
    hook = ("joins the executors' worker threads" if pool and ident == "3.6"
            else "waits for every thread not a daemon")
    assert re.match(r"      joining thread %d \(\S+\): thread %d "
                    r"\(MainThread\) at threading\.py:\d+ in \S+ "
                    r"\(stuck for [^)]*\), at the interpreter's exit, which "
                    r"%s$" % (worker, pid, re.escape(hook)),
                    causes[head[0] + 2]), causes
