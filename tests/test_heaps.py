"""GC objects wherever the interpreter keeps them: generators made by a
thread that has exited are found like any other.  In a free-threaded
build (3.14t) they sit in heap pages no live thread owns, which the heap
walk reaches through mimalloc's abandoned pool; elsewhere they are on the
GC lists like everything else.

- many_gens_target.py COUNT thread: a thread makes COUNT suspended
  generators and exits; the main thread parks holding them."""

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
