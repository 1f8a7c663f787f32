"""An await chain and a `yield from` chain 2,000 deep print whole: the
task's stack is its whole chain, innermost first, and the generators
are one chain no task owns, with no warning.  (Chains were cut at 1,024
links, the rest shown as owned by no task, or as further chains.)

targets/deep_await.py records both chains as the interpreter sees them
(id() of each coroutine and generator).
"""

import json
import re

from conftest import marker_line, run_coroscope, target_script

SCRIPT = target_script("deep_await.py")
DEPTH = 2000


def test_deep_chains_whole(keeper, interp):
    t = keeper.start_target(interp, "deep_await.py", str(DEPTH))
    want = t.ready
    assert len(want["task_chain"]) > DEPTH and \
        len(want["gen_chain"]) == DEPTH + 1, want
    res = run_coroscope("dump", "--json", t.pid)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["warnings"] == [], doc["warnings"]
    task = [x for x in doc["tasks"] if int(x["id"], 16) == want["task"]]
    assert len(task) == 1, doc["tasks"]
    stack = [int(f["id"], 16) for f in task[0]["stack"]]
    # (its innermost: asyncio's own Event.wait, beyond the target's)
    assert stack[-len(want["task_chain"]):] == \
        list(reversed(want["task_chain"])), (len(stack),
                                             len(want["task_chain"]))
    owner = {int(g["id"], 16): g["task"] for g in doc["generators"]}
    for gid in want["gen_chain"]:
        assert owner[gid] is None, gid
    for gid in want["task_chain"]:
        assert int(owner[gid], 16) == want["task"], gid

    text = run_coroscope("dump", t.pid)
    assert text.returncode == 0, text.stderr
    # one chain: a head line, then DEPTH "->" links to the innermost
    gen_end = marker_line(SCRIPT, "gen-end")
    heads = re.findall(r"^  suspended generator +nested +\S+:(\d+)",
                       text.stdout, re.M)
    links = re.findall(r"^      -> suspended generator +nested +\S+:(\d+)",
                       text.stdout, re.M)
    assert len(heads) == 1 and len(links) == DEPTH, (heads, len(links))
    assert links[-1] == str(gen_end), links[-3:]
    assert "cut" not in text.stderr, text.stderr
