"""A task whose coroutine is an object wrapping one (aiohttp's
session.get() under asyncio.ensure_future()) has the wrapped
coroutine's chain as its stack, and waits where that chain waits.

targets/wrapped_coro.py records each such task's chain as the
interpreter sees it (id() of each coroutine, from the wrapped one in):
coroscope's JSON stack must be the same, innermost first (and a task
whose object waits on a future by itself takes no chain another task's
wrapped coroutine awaits that future in); the text shows
the task at the "# MARK: wrapped-wait" line, waiting on the lock the
main task holds.
"""

import json
import re

from conftest import marker_line, run_coroscope, target_script

SCRIPT = target_script("wrapped_coro.py")


def test_wrapped_coroutine_is_the_tasks_stack(keeper, interp):
    t = keeper.start_target(interp, "wrapped_coro.py")
    res = run_coroscope("dump", "--json", t.pid)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    tasks = {int(x["id"], 16): x for x in doc["tasks"]}
    for want in t.ready["tasks"]:
        task = tasks[want["id"]]
        got = [int(f["id"], 16) for f in task["stack"]]
        assert got == list(reversed(want["chain"])), (task, want)
        gens = {int(g["id"], 16): g for g in doc["generators"]}
        for gid in want["chain"]:
            assert int(gens[gid]["task"], 16) == want["id"], gens[gid]

    # the task whose object waits on the future itself has no chain (not
    # the one a wrapped coroutine of another task awaits that future in)
    assert tasks[t.ready["raw"]]["stack"] == [], tasks[t.ready["raw"]]
    lines = sorted(task["stack"][-1]["line"] for task in
                   (tasks[w["id"]] for w in t.ready["tasks"]))
    assert lines == sorted([marker_line(SCRIPT, "wrapped-wait")] * 2 +
                           [marker_line(SCRIPT, "shared-future")]), lines

    text = run_coroscope("dump", t.pid)
    assert text.returncode == 0, text.stderr
    line = marker_line(SCRIPT, "wrapped-wait")
    # (alike: the two may be one group)
    assert re.search(r"`- fetch  \S*wrapped_coro\.py:%d$" % line,
                     text.stdout, re.M), text.stdout
    # both wait on the lock the main task holds
    assert re.search(r"^  task .* holds asyncio\.Lock .*: 2 waiting$",
                     text.stdout, re.M), text.stdout
