"""`coroscope run` on a hanging pytest suite: pytest's own machinery.

While a test runs, pluggy keeps every hook wrapper (pytest's, its
plugins', a conftest.py's) parked at its yield, with the context
managers they entered, and pytest-asyncio's event_loop fixture parked
too: some twenty generators in every pytest run, making no progress
like a stuck one.  They are counted on the samples' idle line, not
listed one by one after the causes; the suite's own yield fixture still
is.  The oracle is the interpreter's own list of its suspended
generators (gc.get_objects()), written by the test before it hangs.
Only Debian's python3.11 has pytest here (no PyPI).
"""

import os
import re
import shutil

from conftest import DEBIAN, debian_with, marker_line, target_script
from test_run import (coroscope_run, likely_causes, process_of,
                      pytest_causes, read_json, seen_lines,
                      work)  # noqa: F401

SUITE = target_script("pytest_parked_suite.py")
CONFTEST = target_script("pytest_parked_conftest.py")
KIND = "pytest's or a plugin's generator, parked while a test runs"


def test_pytest_machinery_idle(work):
    debian_with("pytest", "pytest_asyncio")
    shutil.copy(SUITE, str(work / "test_suite.py"))
    shutil.copy(CONFTEST, str(work / "conftest.py"))
    ready = work / "ready.json"
    report = work / "report.json"
    res = coroscope_run(["--timeout", "4", "--report", report, "--",
                         DEBIAN, "-m", "pytest", "-q", "-p",
                         "no:cacheprovider", "test_suite.py"], cwd=str(work),
                        env={"PARKED_READY": str(ready)})
    info = read_json(ready, "ready file")
    assert res.returncode == 124, res
    gens = info["generators"]
    own = [g for g in gens if g["qualname"] == "own_fixture"]
    parked = [g for g in gens if g["qualname"] != "own_fixture"]
    assert own and own[0]["line"] == marker_line(SUITE, "own-fixture"), gens
    # the conftest's own wrapper, and a plugin's fixture, are among them
    wrapper = [g for g in parked if g["file"].endswith("/conftest.py")]
    assert len(wrapper) == 1 and \
        wrapper[0]["line"] == marker_line(CONFTEST, "own-wrapper"), gens
    assert any(g["qualname"] == "event_loop" for g in parked), gens

    seen = seen_lines(res.stderr, info["pid"])
    for g in parked:
        place = "%s:%d in %s" % (g["file"], g["line"], g["qualname"])
        assert not any(place in l for l in seen), (place, seen)
    idle = [l for l in seen if " idle by design, not listed: " in l]
    assert len(idle) == 1, seen
    count = re.search(re.escape(KIND) + r" \((\d+)\)", idle[0])
    assert count and int(count.group(1)) == len(parked), (len(parked), seen)
    place = "%s:%d in own_fixture" % (work / "test_suite.py",
                                      own[0]["line"])
    assert any(l.startswith('generator "own_fixture" ') and place in l
               for l in seen), seen
    hang = "test_suite.py:%d in test_hangs" % marker_line(SUITE, "test-hang")
    assert any(l.startswith("thread ") and hang in l for l in seen), seen

    # The report's sampled generators say the same, one by one.
    proc = process_of(read_json(report, "--report file"), info["pid"])
    by_place = dict(((g["where"]["file"], g["where"]["line"]), g)
                    for g in proc["sampling"]["generators"])
    for g in parked:
        item = by_place.get((g["file"], g["line"]))
        assert item and item["idle"] == KIND, (g, item)
    item = by_place.get((os.path.realpath(str(work / "test_suite.py")),
                         own[0]["line"]))
    assert item and item["idle"] is None and item["state"] == "stuck", \
        proc["sampling"]["generators"]


XDIST_SUITE = target_script("pytest_xdist_suite.py")


def test_pytest_xdist_controller_idle(work):
    """pytest -n 2 (pytest-xdist), one test hanging in a worker: the
    controller's main thread waits for its workers' events (a queue's
    get() with a 2 s timeout, again and again) and every process has an
    execnet thread reading its channel.  Before, the controller's wait
    was the first cause ("1 waiting on queue.Queue ... (stuck for at
    least 3.6s), times out in 1.6s") and each execnet reader was listed
    stuck; the hanging test came after.  Now the test comes first, the
    controller's wait is an idle cause after it, and the readers and
    the controller's thread are idle by design."""
    debian_with("pytest", "xdist", "execnet")
    shutil.copy(XDIST_SUITE, str(work / "test_suite.py"))
    ready = work / "ready.json"
    res = coroscope_run(["--timeout", "7", "--", DEBIAN, "-m", "pytest",
                         "-q", "-p", "no:cacheprovider", "-n", "2",
                         "test_suite.py"], cwd=str(work),
                        env={"XDIST_READY": str(ready)})
    assert res.returncode == 124, res
    worker = read_json(ready, "ready file")["pid"]
    causes = likely_causes(res.stderr)
    heads = [c for c in causes if c.startswith("  process ")]
    assert heads and heads[0].startswith("  process %d: " % worker), causes
    hang = "test_suite.py:%d in test_hangs" % marker_line(XDIST_SUITE,
                                                          "xdist-hang")
    assert any(hang in c for c in causes), causes
    # the controller's wait, and an idle worker's, idle if named at all
    assert not [h for h in heads if h != heads[0] and
                not h.startswith("  process %d: idle: " % int(
                    h.split()[1].rstrip(":")))], causes
    assert "Popen2IO.read" not in res.stderr.split("\n\n=== ")[0], \
        res.stderr[:4000]
    assert re.search(r"an execnet gateway's receiver thread \(\d+\)",
                     res.stderr), res.stderr[:4000]
    assert re.search(r"pytest-xdist's controller, waiting for its workers "
                     r"\(1\)", res.stderr), res.stderr[:4000]


WATCHER_SUITE = target_script("pytest_watcher_suite.py")


def test_pytest_test_named_under_its_own_cause(work):
    """The hanging test's queue wait (on the main thread, where pytest
    runs it) comes first, with the test being run; its fixture's
    watcher thread, waiting for the teardown to tell it to stop, waits
    as long, comes after, and is not said to run the test.  Before, the
    watcher's wait came first, test line and all."""
    _, causes = pytest_causes(work, WATCHER_SUITE, "test_suite.py")
    heads = [i for i, c in enumerate(causes) if c.startswith("  process ")]
    assert re.match(r"  process \d+: 1 waiting on queue\.Queue ",
                    causes[0]), causes
    assert re.match(r"      thread \d+ \(MainThread\) at \S*test_suite\.py:"
                    r"%d in test_hangs " % marker_line(WATCHER_SUITE,
                                                       "watcher-suite-hangs"),
                    causes[1]), causes
    assert causes[2] == "      test being run: test_suite.py::test_hangs", \
        causes
    event = [i for i in heads if re.match(
        r"  process \d+: 1 waiting on threading\.Event ", causes[i])]
    assert len(event) == 1 and event[0] > 0, causes
    after = causes[event[0] + 1:]
    rest = after[:next((k for k, c in enumerate(after)
                        if c.startswith("  process ")), len(after))]
    assert any("(watcher)" in c for c in rest), causes
    assert not any("test being run" in c for c in rest), causes
