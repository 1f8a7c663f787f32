"""Every way coroscope reads a stopped target gives the same document.

A blocking read copies what the target can change during one stop, lets
it run on and decodes the copy.  A small target has every writable
mapping copied (the default here).  A large one has only the pages that
a first, racy pass of the readers used copied (COROSCOPE_TEST_CAPTURE=
plan forces that path on these small targets); a page the plan lacked is
read from the running target, counted, and the whole round read again
with it planned (=miss drops what the first pass learnt, so the first
round misses and a second one runs); a target that keeps missing is
copied whole after two rounds (=fallback gives up after one), or with
COROSCOPE_TEST_NO_CAPTURE=1 read while it stays stopped.

Whatever the path, the document must be the default one, "stats" apart:
the targets cover thread stacks with locals, native frames, asyncio
tasks and locks (the wait-for graph), and, where Debian's python3.11 has
them, gevent's greenlets and trio's tasks.
"""

import pytest

from conftest import (interpreter, run_coroscope, task_states, wait_until,
                      without_moment)
from test_core import first_difference
from test_sched import has_modules, hub_parked

DEBIAN = interpreter("3.11-debian")

MODES = [
    ("plan", {"COROSCOPE_TEST_CAPTURE": "plan"}),
    ("miss", {"COROSCOPE_TEST_CAPTURE": "miss"}),
    ("fallback", {"COROSCOPE_TEST_CAPTURE": "fallback"}),
    ("fallback-stopped", {"COROSCOPE_TEST_CAPTURE": "fallback",
                          "COROSCOPE_TEST_NO_CAPTURE": "1"}),
    ("stopped", {"COROSCOPE_TEST_NO_CAPTURE": "1"}),
]


def read_every_way(pid, *args):
    """The default document and, by mode name, each other path's."""
    base = run_coroscope("dump", "--json", *(args + (pid,)))
    assert base.returncode == 0, base
    docs = {}
    for name, env in MODES:
        res = run_coroscope("dump", "--json", *(args + (pid,)), env=env)
        assert res.returncode == 0, (name, res)
        docs[name] = res.json()
    return base.json(), docs


def assert_same(base, docs):
    want = without_moment(base)
    for name, doc in docs.items():
        got = without_moment(doc)
        assert got == want, "%s: %s" % (name, first_difference(want, got))
    # The second round really ran: the first one read every page it
    # needed on its own, as it missed it, where the planned copy read
    # them a thousand runs to a call.
    assert docs["miss"]["stats"]["reads"] > docs["plan"]["stats"]["reads"], \
        (docs["miss"]["stats"], docs["plan"]["stats"])


def test_threads_and_locals(interp, keeper):
    t = keeper.start_target(interp, "threads_target.py", parked_main=True)
    base, docs = read_every_way(t.pid, "--locals")
    assert len(base["threads"]) == len(t.ready["threads"]), base["threads"]
    assert_same(base, docs)


def test_native_frames(interp, keeper):
    t = keeper.start_target(interp, "native_target.py")
    # Its reporter thread exits after the ready file; then every thread
    # sleeps in a system call.
    count = len(t.ready["threads"])

    def parked():
        states = task_states(t.pid)
        return len(states) == count and \
            all(s == "S" for s in states.values())
    assert wait_until(parked, 10), task_states(t.pid)
    base, docs = read_every_way(t.pid, "--native-all")
    assert any(f.get("kind") == "native" for th in base["threads"]
               for f in th["frames"]), base["threads"]
    assert_same(base, docs)


@pytest.mark.parametrize("scenario", ["alock", "threads"])
def test_tasks_and_graph(interp, keeper, scenario):
    t = keeper.start_target(interp, "graph_target.py", scenario)
    base, docs = read_every_way(t.pid)
    assert base["graph"]["edges"], base["graph"]
    assert_same(base, docs)


@pytest.fixture
def debian_target(keeper):
    def start(script, *args):
        t = keeper.start_target(DEBIAN, script, *args)
        hub_parked(t.pid)
        return t
    return start


def test_gevent_greenlets(debian_target):
    if not has_modules("greenlet", "gevent"):
        pytest.skip("needs /usr/bin/python3.11 with python3-greenlet and "
                    "python3-gevent")
    t = debian_target("gevent_target.py")
    base, docs = read_every_way(t.pid)
    assert base["greenlets"], base
    assert_same(base, docs)


def test_trio_tasks(debian_target):
    if not has_modules("trio", "anyio"):
        pytest.skip("needs /usr/bin/python3.11 with python3-trio and "
                    "python3-anyio")
    t = debian_target("trio_target.py", "trio")
    base, docs = read_every_way(t.pid)
    assert [x for x in base["tasks"] if x["framework"] == "trio"], base
    assert_same(base, docs)
