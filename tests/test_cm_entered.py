"""Generators of contextlib's generator-based context managers that a
`with` keeps entered (readers/waitgraph_holds.c, graph "entered").

targets/cm_entered.py: thread "holder" in `with outer_cm():`, whose
generator is in `with inner_cm():`; a task in `async with async_cm():`
(3.7+); by_hand()'s generator entered by calling __enter__(), which no
`with` holds.  Expected places come from the target's markers; the
generator entered by hand from its id() in the ready file.
"""

import json
import re

import pytest

from conftest import interpreter_or_skip, marker_line, run_coroscope, \
    target_script
from test_run import coroscope_run, read_json, seen_lines, work  # noqa: F401

SCRIPT = target_script("cm_entered.py")
IDLE = "a context manager's generator, held open by a `with`"


def test_with_keeps_generators_entered(keeper, interp):
    """Each entered generator names the thread or task whose `with`
    keeps it, the frame of that `with` (a generator's own, for the
    nested one) and the with statement's line; the one entered by
    hand is not there.  The text says it after the generator's line."""
    target = keeper.start_target(interp, "cm_entered.py")
    said = target.ready
    res = run_coroscope("dump", "--json", target.pid)
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    graph = doc["graph"]
    gens = dict((g["id"], g) for g in doc["generators"])
    nodes = graph["nodes"]
    holder = [n for n in nodes if n["kind"] == "thread" and
              n["name"] == "holder"]
    assert len(holder) == 1, nodes
    tasks = [t["id"] for t in doc["tasks"]
             if any(f["function"] == "task_holds" for f in t["stack"])]
    task_nodes = [n["id"] for n in nodes
                  if n["kind"] == "task" and n["task"] in tasks]
    got = {}
    for e in graph["entered"]:
        g = gens[e["generator"]]
        if g["file"].endswith("cm_entered.py"):
            got[g["qualname"]] = (e["by"], e["at"]["function"], e["line"],
                                  g["line"])
    want = {
        "outer_cm": (holder[0]["id"], "holder",
                     marker_line(SCRIPT, "thread-with"),
                     marker_line(SCRIPT, "outer-yield")),
        "inner_cm": (holder[0]["id"], "outer_cm",
                     marker_line(SCRIPT, "nested-with"),
                     marker_line(SCRIPT, "inner-yield")),
    }
    if said["async"]:
        assert len(task_nodes) == 1, (tasks, nodes)
        want["async_cm"] = (task_nodes[0], "task_holds",
                            marker_line(SCRIPT, "task-with"),
                            marker_line(SCRIPT, "async-yield"))
    assert got == want, graph["entered"]
    by_hand = "0x%x" % said["by_hand"]
    assert gens[by_hand]["qualname"] == "by_hand", gens[by_hand]
    assert by_hand not in [e["generator"] for e in graph["entered"]]

    text = run_coroscope("dump", target.pid).stdout
    tid = [t["tid"] for t in doc["threads"] if t["name"] == "holder"][0]
    for name, func, mark in (("outer_cm", "holder", "thread-with"),
                             ("inner_cm", "outer_cm", "nested-with")):
        assert re.search(r"\n  suspended generator +%s  [^\n]*  0x[0-9a-f]+"
                         r"  held open by a `with` of thread %d \(holder\) "
                         r"at cm_entered\.py:%d in %s\n"
                         % (name, tid, marker_line(SCRIPT, mark), func),
                         text), text
    line = [l for l in text.splitlines() if by_hand in l]
    assert len(line) == 1 and "held open" not in line[0], text


@pytest.mark.not_sanitized("on 3.12, which the sanitizer pass leaves out")
def test_entered_generators_are_idle_in_run(work):
    """`run` counts the entered generators as idle by design, not as
    stuck ones (before: a "generator ... stuck" line for each, as for
    click's augment_usage_errors() in every uvicorn run); the one
    entered by hand stays listed, and so does the holder thread."""
    py = interpreter_or_skip("3.12")
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "4", "--", py.path, SCRIPT, ready])
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    seen = seen_lines(res.stderr, info["pid"])
    for name in ("outer_cm", "inner_cm", "async_cm"):
        assert not [l for l in seen if '"%s"' % name in l], seen
    idle = [l for l in seen if "idle by design" in l]
    assert len(idle) == 1 and ("%s (3)" % IDLE) in idle[0], seen
    assert [l for l in seen if l.startswith('generator "by_hand"')], seen
    assert [l for l in seen if l.startswith('thread ') and
            '"holder"' in l], seen
