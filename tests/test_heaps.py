"""GC objects wherever the interpreter keeps them: generators made by a
thread that has exited are found like any other.  In a free-threaded
build (3.14t) they sit in heap pages no live thread owns, which the heap
walk reaches through mimalloc's abandoned pool; elsewhere they are on the
GC lists like everything else.

- many_gens_target.py COUNT thread: a thread makes COUNT suspended
  generators and exits; the main thread parks holding them."""

import re

from conftest import marker_line, run_coroscope, target_script

MANY_GENS = target_script("many_gens_target.py")
COUNT = 5000


def test_generators_of_an_exited_thread(interp, keeper):
    t = keeper.start_target(interp, "many_gens_target.py", str(COUNT),
                            "thread", parked_main=True, timeout=60)
    assert t.ready["count"] == COUNT
    doc = run_coroscope("dump", "--json", t.pid).json()
    # The maker thread is gone; only the parked main thread is left.
    assert [th["name"] for th in doc["threads"]] == ["MainThread"], \
        [th["name"] for th in doc["threads"]]
    line = marker_line(MANY_GENS, "held-yield")
    held = [g for g in doc["generators"]
            if g["qualname"] == "held" and g["state"] == "suspended"]
    assert len(held) == COUNT, (len(held), doc["generators"][:3])
    assert {g["line"] for g in held} == {line}


def test_generators_alike_one_line_in_text(interp, keeper):
    """Generators alike are counted on one line: they are grouped by
    their code objects, and enough of them are read on two threads, each
    with a code cache (readers/gens_many.c): the second's are the first's
    once both are done."""
    t = keeper.start_target(interp, "many_gens_target.py", str(COUNT),
                            parked_main=True, timeout=60)
    res = run_coroscope("dump", t.pid)
    assert res.returncode == 0, res
    rows = [m.groups() for m in
            (re.match(r"\s+(\d+) x suspended generator\s+held\s+(\S+):(\d+)$",
                      l) for l in res.stdout.splitlines()) if m]
    assert rows == [(str(COUNT), MANY_GENS,
                     str(marker_line(MANY_GENS, "held-yield")))], \
        res.stdout[-2000:]


def test_generators_locals(interp, keeper):
    """--locals of generators read on two threads: each its number and
    the object it holds (a generic repr, a path that once wrote to a
    buffer the threads shared: `make check-tsan` runs this)."""
    t = keeper.start_target(interp, "many_gens_target.py", str(COUNT),
                            parked_main=True, timeout=60)
    doc = run_coroscope("dump", "--json", "--locals", t.pid).json()
    held = [g for g in doc["generators"] if g["qualname"] == "held"]
    assert len(held) == COUNT, len(held)
    numbers = sorted(int(g["locals"]["i"]) for g in held)
    assert numbers == list(range(COUNT)), numbers[:10]
    kept = {g["locals"]["kept"] for g in held}
    want = r"<__main__\.Kept object at 0x[0-9a-f]+>$"
    assert len(kept) == 1 and re.match(want, kept.pop()), kept
