"""Readers at the edges (issue 16): values, stacks, heaps and interpreters
a hostile or merely unusual target can hold.

- extremes_target.py: str locals longer than 2**20 characters, and a
  50,000-deep recursion (the frame cap keeps both ends and says how many
  frames it left out).
- many_gens_target.py: a million suspended generators, dumped within a
  time bound that also holds for the sanitizer build (it is not marked
  slow: the sanitizer suite runs it).
- subinterp_target.py: threads, tasks and generators of several
  interpreters, each reported with its interpreter.
"""

import os
import time

import pytest

from conftest import (SANITIZED, interpreter, marker_line, run_coroscope,
                      target_script)

EXTREMES = target_script("extremes_target.py")


# ---------------------------------------------------------------------------
# extremes_target: long str locals, deep recursion

@pytest.fixture(scope="module")
def extremes(interp, module_keeper):
    t = module_keeper.start_target(interp, "extremes_target.py",
                                   parked_main=True, timeout=60)
    yield t
    t.proc.kill()
    t.proc.wait()


def thread_named(doc, name):
    found = [t for t in doc["threads"] if t["name"] == name]
    assert len(found) == 1, [t["name"] for t in doc["threads"]]
    return found[0]


def test_huge_str_locals_are_shown_truncated(extremes):
    doc = run_coroscope("dump", "--json", "--locals", extremes.pid).json()
    frame = thread_named(doc, "huge")["frames"][0]
    assert frame["function"] == "hold_huge"
    assert frame["line"] == marker_line(EXTREMES, "huge-park")
    for name, info in sorted(extremes.ready["huge"].items()):
        assert info["len"] > 2 ** 20
        got = frame["locals"][name]
        assert got == info["head_repr"] + "...", (name, got[:80])
