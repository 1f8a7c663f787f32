"""`run`'s idle cause for a thread in socketserver's serve_forever()
(targets/serve_forever.py): a server a test started and never shut
down.  Before, "no likely cause stands out": the thread polls, so the
samples see it run, and nothing the wait-for graph knows waits.  Now an
idle cause names it and the socket it listens on, whose fd is read from
the C socket object (the _socket module's layout).  The fd and address
are the server's own (fileno(), server_address)."""

import re

import pytest

from conftest import marker_line, target_script
from test_run import seen_lines, work  # noqa: F401
from test_run_reads import run_target

SCRIPT = target_script("serve_forever.py")


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.14", "3.14t"))
def test_server_serving_forever_is_named(ident, work):
    info, causes, doc, stderr = run_target(work, ident, SCRIPT)
    pid = info["pid"]
    head = '  process %d: idle: thread %d "MainThread" serves forever ' \
           '(socketserver), listening on fd %d, a TCP listening socket ' \
           '%s:%d' % ((pid, pid, info["fd"]) + tuple(info["address"]))
    assert list(causes) == [head], stderr[:3000]
    assert len(causes[head]) == 1 and re.match(
        r"^at \S*serve_forever\.py:%d in <module>: server\.serve_forever\(\)"
        r"  # MARK: serve$" % marker_line(SCRIPT, "serve"),
        causes[head][0]), causes[head]
    assert [c["kind"] for c in doc["causes"] if c["pid"] == pid] == \
        ["idle"], doc["causes"]


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_server_stuck_in_its_handler_is_not_idle(ident, work):
    """A serve_forever() thread stuck in a request's handler is that
    handler's cause (a read of a pipe here), not a server at rest."""
    info, causes, _, stderr = run_target(work, ident, SCRIPT, "handler")
    pid = info["pid"]
    assert not any("serves forever" in h for h in causes), stderr[:3000]
    head = [h for h in causes if h.startswith(
        '  process %d: thread %d "MainThread" blocked reading fd ' %
        (pid, pid))]
    assert len(head) == 1, causes
    assert re.match(r"^at \S*serve_forever\.py:%d in \S*do_GET: "
                    % marker_line(SCRIPT, "handler"),
                    causes[head[0]][0]), causes[head[0]]


LOOP = target_script("idle_loop.py")


def idle_loop(work, ident, mode):
    """idle_loop.py's mode under `run`: its ready file, its process's
    causes, and the text."""
    info, causes, doc, stderr = run_target(work, ident, LOOP, mode)
    return info, causes, stderr


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_idle_event_loop_is_named(ident, work):
    """An event loop whose last task ended, in run_forever() that nothing
    stops: an idle cause says nothing is left (before, "no likely cause
    stands out"); one serving a TCP server nobody connects to names its
    listening socket."""
    info, causes, stderr = idle_loop(work, ident, "bare")
    pid = info["pid"]
    head = ('  process %d: idle: thread %d "MainThread" runs an event loop '
            "with nothing left to do: no task, callback, timer or file of "
            "its own (only a signal or another thread can wake it)"
            % (pid, pid))
    assert list(causes) == [head], stderr[:3000]
    assert re.match(r"^at \S*idle_loop\.py:%d in <module>: "
                    r"loop\.run_forever\(\)" % marker_line(LOOP,
                                                           "run-forever"),
                    causes[head][0]), causes[head]
    info, causes, stderr = idle_loop(work, ident, "server")
    pid = info["pid"]
    head = ('  process %d: idle: thread %d "MainThread" runs an event loop '
            "with no task, callback or timer: it waits only on fd %d, a TCP "
            "listening socket %s:%d" % ((pid, pid, info["fd"]) +
                                        tuple(info["address"])))
    assert list(causes) == [head], stderr[:3000]


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
@pytest.mark.parametrize("mode", ("timer", "fed", "executor"))
def test_event_loop_with_work_is_no_cause(ident, mode, work):
    """A loop with work left is not idle: a timer due later, callbacks a
    thread keeps giving it (it runs between samples), the executor's job
    run_until_complete() waits for."""
    info, causes, stderr = idle_loop(work, ident, mode)
    assert not any("event loop" in h for h in causes), stderr[:3000]


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_loop_asleep_with_callbacks_ready(ident, work):
    """An asyncio.Event set from a thread: the waiting task's wake-up is
    ready, but nothing woke the loop, asleep in its selector.  Before,
    "no likely cause stands out"."""
    info, causes, stderr = idle_loop(work, ident, "unwoken")
    pid = info["pid"]
    head = ('  process %d: event loop asleep: thread %d "MainThread" waits '
            "in its selector with 1 callback ready, scheduled after it went "
            "to sleep by another thread that did not wake it (an asyncio "
            "Event, Future or Queue used from a thread, not through "
            "call_soon_threadsafe()): they run only at its next event"
            % (pid, pid))
    assert list(causes)[:1] == [head], stderr[:3000]
    assert re.match(r"^at \S*idle_loop\.py:%d in <module>: "
                    % marker_line(LOOP, "unwoken"), causes[head][0]), \
        causes[head]


@pytest.mark.parametrize("ident", ("3.7", "3.11-debian", "3.12", "3.14t"))
def test_asyncio_serve_forever_is_idle(ident, work):
    """A task in asyncio's Server.serve_forever(): before, a "stuck task"
    waiting on a Future, the likeliest cause of all; now an idle cause
    with the socket it listens on, and no stuck task.  The samples' list
    counts it idle by design, as watch calls it (before, 'task "..."
    stuck for at least 2.0s at ... in Server.serve_forever')."""
    info, causes, stderr = idle_loop(work, ident, "serve-forever")
    pid = info["pid"]
    head = [h for h in causes if "serves forever" in h]
    assert len(head) == 1, stderr[:3000]
    assert re.match(r"^  process %d: idle: task '[^']+' serves forever "
                    r"\(asyncio\), listening on fd %d, a TCP listening "
                    r"socket %s:%d$" % ((pid, info["fd"]) +
                                        tuple(info["address"])),
                    head[0]), head
    assert causes[head[0]] == [
        "at %s:%d in serve_forever: await server.serve_forever()  "
        "# MARK: serve-forever" % (LOOP, marker_line(LOOP, "serve-forever"))
    ], causes[head[0]]
    assert not any("stuck task" in h for h in causes), causes
    seen = seen_lines(stderr, pid)
    assert not [l for l in seen
                if l.startswith("task ") and "serve_forever" in l], seen
    assert any("an asyncio server's serve_forever() (1)" in l
               for l in seen), seen


EVENT = target_script("serve_on_event.py")


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_main_resting_on_an_event_of_its_line_is_idle(ident, work):
    """`await asyncio.Event().wait()` in main(), the way tornado's and
    aiohttp's guides serve for ever: nothing else can reach that Event
    to set it.  It blocked the main task, so it ranked first, above the
    lock the server's handler was stuck behind (a helper's user round);
    now it is an idle cause, last, saying why.  An Event main() keeps
    in a global is no rest by design: first, as before."""
    info, causes, _, stderr = run_target(work, ident, EVENT)
    pid = info["pid"]
    heads = list(causes)
    # (the holder's Event first, 2 blocked behind it; then the lock)
    assert [h for h in heads[:-1] if "waiting on asyncio.Lock" in h], \
        stderr[:3000]
    assert re.match(r"^  process %d: idle: 1 waiting on asyncio\.Event "
                    r"0x[0-9a-f]+ \(not set, 1 waiter\)$" % pid,
                    heads[-1]), heads
    detail = causes[heads[-1]]
    assert len(detail) == 2 and re.match(
        r"^task '[^']+' at \S*serve_on_event\.py:%d in main "
        % marker_line(EVENT, "forever"), detail[0]), detail
    assert detail[1] == ("its Event is made at that line and waited on "
                         "there: nothing else can set it (a way to run "
                         "for ever)"), detail

    info, causes, _, stderr = run_target(work, ident, EVENT, "stored")
    heads = list(causes)
    assert re.match(r"^  process %d: 1 waiting on asyncio\.Event 0x%x "
                    r"\(not set, 1 waiter\)" % (info["pid"], info["event"]),
                    heads[0]), stderr[:3000]
    assert not any(" idle: " in h for h in heads), heads
    assert not any("nothing else can set it" in d
                   for h in heads for d in causes[h]), causes

