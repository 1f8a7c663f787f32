"""An RLock whose owner ident is no thread of the process
(targets/fork_rlock.py): a thread took it and ended, or the process is a
fork of one whose thread held it.  Before, "holder unknown"; now the
dump and `run` say the ident belongs to no thread here, and `run` names
the parent's thread holding the parent's copy, where it took it.  The
ident is the one the interpreter gives (threading.get_ident()).  A
plain Lock held at the fork names no owner: `run` names the parent's
thread holding the parent's copy, and what that means if it held it at
the fork.  The
parent, in os.waitpid() for the child, waits for it to end (a system
call no object of the graph's shows)."""

import json
import re

import pytest

from conftest import interpreter_or_skip, marker_line, target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401

SCRIPT = target_script("fork_rlock.py")
GONE = ("held by thread ident 0x%x, no thread of this process (it ended "
        "holding it, or the process forked while it held it)")


def run_target(work, python, mode):
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "3", "--", python, SCRIPT,
                         str(ready), mode])
    assert res.returncode == 124, res
    return json.loads(ready.read_text()), res


def lock_cause(work, py, mode):
    """The target under `run` in mode: its ready file, the Run, the
    causes, and the index of the one cause of the RLock, which ends
    saying its owner is gone."""
    info, res = run_target(work, py.path, mode)
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes) if c.startswith(
        "  process %d: 1 waiting on threading.RLock " % info["pid"])]
    assert len(head) == 1, causes
    assert causes[head[0]].endswith(GONE % info["ident"]), causes
    return info, res, causes, head[0]


def waits_rows(stderr, pid):
    """The Waits section's lines of process pid's dump."""
    text = stderr.split("=== process %d " % pid, 1)[1]
    text = text.split("\n=== process ", 1)[0]
    return text.split("\nWaits:\n", 1)[1].split("\n\n", 1)[0].splitlines()


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_rlock_held_at_fork(ident, work):
    py = interpreter_or_skip(ident)
    info, res, causes, at = lock_cause(work, py, "fork")
    assert re.match(
        r"^      held when this process forked: in parent %d, thread \d+ "
        r"\(holder\) holds it at fork_rlock\.py:%d in holder \(taken at "
        r"line %d\)$" % (info["parent"], marker_line(SCRIPT, "fork-holds"),
                         marker_line(SCRIPT, "fork-takes")),
        causes[at + 1]), causes
    assert re.match(r"^      thread %d \(MainThread\) at fork_rlock\.py:%d "
                    r"in <module>" % (info["pid"],
                                      marker_line(SCRIPT, "fork-child")),
                    causes[at + 2]), causes
    # the parent, in os.waitpid(): no object the graph sees
    parent = [i for i, c in enumerate(causes) if re.match(
        r'^  process %d: thread %d "MainThread" waits for child process %d '
        r'\(\S+\) to end \(stuck for at least [0-9.]+s\)$'
        % (info["parent"], info["parent"], info["pid"]), c)]
    assert len(parent) == 1, causes
    assert re.match(r"^      at \S*fork_rlock\.py:%d in <module>: "
                    % marker_line(SCRIPT, "fork-parent"),
                    causes[parent[0] + 1]), causes
    rows = waits_rows(res.stderr, info["pid"])
    assert any(r.startswith("    waits for: threading.RLock ") and
               r.endswith(" " + GONE % info["ident"]) for r in rows), rows


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_lock_held_at_fork(ident, work):
    py = interpreter_or_skip(ident)
    info, res = run_target(work, py.path, "fork-lock")
    causes = likely_causes(res.stderr)
    head = [i for i, c in enumerate(causes) if c.startswith(
        "  process %d: 1 waiting on threading.Lock " % info["pid"])]
    assert len(head) == 1, causes
    at = head[0]
    assert causes[at].endswith(" (locked), holder unknown"), causes
    assert re.match(
        r"^      held in parent %d: thread \d+ \(holder\) holds its copy "
        r"at fork_rlock\.py:%d in holder \(taken at line %d\); if it held "
        r"it when this process forked, nothing here will release it$"
        % (info["parent"], marker_line(SCRIPT, "fork-holds"),
           marker_line(SCRIPT, "fork-takes")), causes[at + 1]), causes
    assert re.match(r"^      thread %d \(MainThread\) at fork_rlock\.py:%d "
                    r"in <module>" % (info["pid"],
                                      marker_line(SCRIPT, "fork-child")),
                    causes[at + 2]), causes


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_rlock_owner_ended(ident, work):
    py = interpreter_or_skip(ident)
    info, res, causes, at = lock_cause(work, py, "ended")
    # (its parent is no Python process of run's: nothing to name there)
    assert re.match(r"^      thread %d \(MainThread\) at fork_rlock\.py:%d "
                    r"in <module>" % (info["pid"],
                                      marker_line(SCRIPT, "ended-take")),
                    causes[at + 1]), causes
    assert any(r.endswith(" " + GONE % info["ident"])
               for r in waits_rows(res.stderr, info["pid"])), res.stderr
