"""`make check`'s release pass leaves the per-interpreter tests on the
sanitizer pass's interpreters, and the tests of no interpreter, to that
pass (COROSCOPE_TEST_SANITIZER_PYTHONS, conftest.py), but for those the
sanitizer pass does not run: the slow and packaging tests, and those it
runs on other interpreters only (@pytest.mark.sanitizer_runs_on).
Checked on the collection of a module of such tests (and of tests
parametrized by an interpreter's id, as test_watch.py's are, or by an
`ident`, as those that call interpreter_or_skip() are, or by a `py`, an
Interpreter, as test_run.py's CORE ones are) beside a copy of
conftest.py, and
on test_run.py's await cycle, which the sanitizer pass runs on 3.12 and
Debian's 3.11 only.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import INTERPRETERS, TESTS_DIR

# Two interpreters handed to the sanitizer pass (as SAN_PYTHONS hands its
# own), and one of the release pass's only.
LEFT = ("3.6", "3.14t")
OTHER = "3.12"

SAMPLE = '''
import pytest

from conftest import INTERPRETERS

BY_PY = [i for i in INTERPRETERS if i.id in ("3.6", "3.12", "3.14t")]

def test_plain(interp):
    pass

@pytest.mark.slow
def test_slow(interp):
    pass

@pytest.mark.packaging
def test_packaging(interp):
    pass

@pytest.mark.sanitizer_runs_on("3.12")
def test_sanitizer_on_312_only(interp):
    pass

def test_no_interpreter():
    pass

@pytest.mark.slow
def test_slow_no_interpreter():
    pass

@pytest.mark.parametrize("py", BY_PY, ids=[i.id for i in BY_PY])
def test_by_py(py):
    pass

@pytest.mark.not_sanitized("on 3.12, which the sanitizer pass leaves out")
def test_not_sanitized():
    pass

def test_skips_for_the_pass():
    pytest.skip("interpreter 3.12 left out by COROSCOPE_TEST_PYTHONS")

@pytest.mark.parametrize("interp_id", ["3.6", "3.12", "3.14t"])
def test_by_id(interp_id):
    pass

@pytest.mark.parametrize("ident", ["3.6", "3.12", "3.14t", "uvloop"])
def test_by_ident(ident):
    pass
'''

CYCLE_TESTS = ("test_cycle_times_out_with_124",
               "test_cycle_leaves_nothing_running",
               "test_cycle_child_blocked_frame_named",
               "test_cycle_tasks_named")


def needed():
    here = [i.id for i in INTERPRETERS]
    missing = [i for i in LEFT + (OTHER,) if i not in here]
    if missing:
        pytest.skip("needs interpreters %s, not installed here"
                    % ", ".join(missing))


def collected(where, module, left):
    """(node ids collected, pytest's output) with
    COROSCOPE_TEST_SANITIZER_PYTHONS=left."""
    env = dict(os.environ, COROSCOPE_TEST_SANITIZER_PYTHONS=left)
    for name in ("COROSCOPE_TEST_PYTHONS", "COROSCOPE_SANITIZED",
                 "COROSCOPE_TEST_AFTER_RELEASE"):
        env.pop(name, None)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q",
         "-p", "no:cacheprovider", "-p", "no:xdist", module],
        cwd=where, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:]
    return (set(line.strip() for line in out.stdout.splitlines()
                if "::" in line), out.stdout)


def node(test, ident=None):
    return "test_sample.py::%s%s" % (test, "[%s]" % ident if ident else "")


def sanitized_sample(tmp_path, pythons, keyword, after_release=False):
    """pytest -v over SAMPLE beside a copy of conftest.py, as the
    sanitizer pass runs it (COROSCOPE_SANITIZED=1) on the interpreters
    pythons, the tests keyword selects: its result."""
    needed()
    shutil.copy(os.path.join(TESTS_DIR, "conftest.py"), str(tmp_path))
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = dict(os.environ, COROSCOPE_SANITIZED="1",
               COROSCOPE_TEST_PYTHONS=pythons)
    env.pop("COROSCOPE_TEST_SANITIZER_PYTHONS", None)
    env.pop("COROSCOPE_TEST_AFTER_RELEASE", None)
    if after_release:
        env["COROSCOPE_TEST_AFTER_RELEASE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-rsf", "-p",
         "no:cacheprovider", "-p", "no:xdist", "-k", keyword,
         "test_sample.py"],
        cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)


def test_release_pass_leaves_what_the_sanitizer_pass_runs(tmp_path):
    needed()
    shutil.copy(os.path.join(TESTS_DIR, "conftest.py"), str(tmp_path))
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    every, plain = collected(str(tmp_path), "test_sample.py", "")
    kept, text = collected(str(tmp_path), "test_sample.py", ",".join(LEFT))
    for ident in LEFT + (OTHER,):
        assert node("test_plain", ident) in every, sorted(every)
    # (the tests that name their interpreters by id too: test_watch.py's)
    assert every - kept == set(node(t, i) for i in LEFT
                               for t in ("test_plain", "test_by_id",
                                         "test_by_ident", "test_by_py")) | \
        set([node("test_no_interpreter"), node("test_by_ident", "uvloop"),
             node("test_skips_for_the_pass")]), sorted(every - kept)
    assert node("test_by_id", OTHER) in kept
    assert node("test_by_py", OTHER) in kept
    assert node("test_by_ident", OTHER) in kept
    for ident in LEFT:
        for test in ("test_slow", "test_packaging",
                     "test_sanitizer_on_312_only"):
            assert node(test, ident) in kept, (test, ident)
    assert node("test_plain", OTHER) in kept
    assert node("test_slow_no_interpreter") in kept
    assert node("test_not_sanitized") in kept
    said = re.search(r"Python versions left to the sanitizer pass .*: (.*)",
                     text)
    assert said and "3.6" in said.group(1) and \
        "free-threaded" in said.group(1), text[-2000:]
    assert "left to the sanitizer pass" not in plain


def test_sanitizer_pass_skips_where_it_does_not_run(tmp_path):
    """The same marker skips the test, in the sanitizer pass, on the
    interpreters it does not name."""
    out = sanitized_sample(tmp_path, "%s,%s" % (LEFT[0], OTHER),
                           "sanitizer_on_312_only")
    assert out.returncode == 0, out.stdout[-3000:]
    assert re.search(r"test_sanitizer_on_312_only\[%s\] SKIPPED"
                     % re.escape(LEFT[0]), out.stdout), out.stdout[-3000:]
    assert "the sanitizer run covers 3.12" in out.stdout, out.stdout[-3000:]
    assert re.search(r"test_sanitizer_on_312_only\[%s\] PASSED"
                     % re.escape(OTHER), out.stdout), out.stdout[-3000:]


def test_sanitizer_pass_skips_interpreters_left_out(tmp_path):
    """A test naming its interpreter by a parameter of its own (`py`,
    `ident`) on one COROSCOPE_TEST_PYTHONS leaves out is skipped in the
    sanitizer pass, saying why: the release pass ran it (it ran in both,
    before)."""
    out = sanitized_sample(tmp_path, ",".join(LEFT), "by_py or by_ident")
    assert out.returncode == 0, out.stdout[-3000:]
    for test in ("test_by_py", "test_by_ident"):
        for ident in LEFT:
            assert re.search(r"%s\[%s\] PASSED" % (test, re.escape(ident)),
                             out.stdout), out.stdout[-3000:]
        assert re.search(r"%s\[%s\] SKIPPED" % (test, re.escape(OTHER)),
                         out.stdout), out.stdout[-3000:]
    assert "interpreter 3.12 left out by COROSCOPE_TEST_PYTHONS" in \
        out.stdout, out.stdout[-3000:]
    assert re.search(r"test_by_ident\[uvloop\] PASSED", out.stdout), \
        out.stdout[-3000:]


def test_await_cycle_stays_where_the_sanitizer_pass_skips_it():
    needed()
    kept, _ = collected(TESTS_DIR, "test_run.py", ",".join(LEFT))
    for test in CYCLE_TESTS:
        for ident in LEFT:
            assert "test_run.py::%s[%s]" % (test, ident) in kept, \
                (test, ident)


def test_a_test_neither_pass_runs_fails(tmp_path):
    """In `make check`'s sanitizer pass (COROSCOPE_TEST_AFTER_RELEASE=1),
    a test of no interpreter, which the release pass left to it, that
    skips for the pass's sake (an interpreter it leaves out) ran in
    neither pass: it fails, saying to mark it not_sanitized; one so
    marked is skipped with its reason (and the release pass keeps it,
    above)."""
    out = sanitized_sample(
        tmp_path, ",".join(LEFT),
        "skips_for_the_pass or not_sanitized or no_interpreter",
        after_release=True)
    assert out.returncode == 1, out.stdout[-3000:]
    assert re.search(r"test_skips_for_the_pass FAILED", out.stdout), \
        out.stdout[-3000:]
    assert "it ran in neither; mark it @pytest.mark.not_sanitized" in \
        out.stdout, out.stdout[-3000:]
    assert re.search(r"test_not_sanitized SKIPPED", out.stdout), \
        out.stdout[-3000:]
    assert "on 3.12, which the sanitizer pass leaves out" in out.stdout
    assert re.search(r"test_no_interpreter PASSED", out.stdout), \
        out.stdout[-3000:]
