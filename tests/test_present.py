"""The text report's presentation: source lines under frames, tree lines,
identical tasks grouped, --locals values, --max-items.

targets/present_target.py parks 300 identical tasks on one Event, a main
task on a future, and a thread in a frame with locals of every kind; with
a secret directory it also imports a root-only module and drops to nobody.
Expected lines come from its "# MARK:" comments.
"""

import os
import pty
import pwd
import re
import select
import shutil
import subprocess
import tempfile

import pytest

from conftest import (COROSCOPE, TIME_SCALE, assert_one_error_line,
                      control_interpreter, coroscope_env, marker_line,
                      run_coroscope,
                      target_script, wait_until, without_moment_marks)
from test_core import GCORE, take_gcore

SCRIPT = target_script("present_target.py")
COUNT = 300
TREE_CHARS = " \t\u2502\u251c\u2514\u2500|`-"
BOX = ("\u251c\u2500 ", "\u2514\u2500 ", "\u2502  ")
ASCII = ("|- ", "`- ")


def marker_text(script, name):
    with open(script) as f:
        return f.read().splitlines()[marker_line(script, name) - 1].strip()


@pytest.fixture(scope="module")
def target(interp, module_keeper):
    if interp.version.startswith("3.6"):
        pytest.skip("the presentation tests target 3.7 - 3.14")
    t = module_keeper.start_target(interp, "present_target.py", str(COUNT))
    yield t
    t.proc.kill()
    t.proc.wait()


@pytest.fixture(scope="module")
def text(target):
    res = run_coroscope("dump", target.pid)
    assert res.returncode == 0, res
    return res.stdout


@pytest.fixture(scope="module")
def doc(target):
    return run_coroscope("dump", "--json", target.pid).json()


def line_after(lines, pattern):
    """The line after the first one matching pattern, tree lines and
    blanks stripped; None when no line matches."""
    for n, line in enumerate(lines):
        if re.search(pattern, line) and n + 1 < len(lines):
            return lines[n + 1].strip(TREE_CHARS)
    return None


def counting_order(name):
    """A sort key: digit runs as numbers (cli/natural_order.h)."""
    return [(0, int(p), p) if p.isdigit() else (1, 0, p)
            for p in re.split(r"(\d+)", name)]


def parked_tasks(doc):
    return [t for t in doc["tasks"]
            if t["stack"] and t["stack"][0]["function"] == "wait"
            and any(f["function"] == "parked" for f in t["stack"])]


# Source lines ---------------------------------------------------------------

def test_source_line_under_thread_frame(text):
    lines = text.splitlines()
    got = line_after(lines, r'File "%s", line %d, in (\S+\.)?hold_locals$' % (
        re.escape(SCRIPT), marker_line(SCRIPT, "hold-locals")))
    assert got == marker_text(SCRIPT, "hold-locals"), text


def test_source_line_under_await_tree_frame(text):
    lines = text.splitlines()
    got = line_after(lines, r"\bmain  %s:%d$" % (
        re.escape(SCRIPT), marker_line(SCRIPT, "main-parked")))
    assert got == marker_text(SCRIPT, "main-parked"), text
    got = line_after(lines, r"\bparked  %s:%d$" % (
        re.escape(SCRIPT), marker_line(SCRIPT, "parked")))
    assert got == marker_text(SCRIPT, "parked"), text


def test_no_source_removes_them(target, text):
    res = run_coroscope("dump", "--no-source", target.pid)
    assert res.returncode == 0, res
    for mark in ("hold-locals", "main-parked", "parked"):
        want = marker_text(SCRIPT, mark)
        assert want in text
        assert not [l for l in res.stdout.splitlines()
                    if l.strip(TREE_CHARS) == want], res
    # Nothing else changed: the same lines, less the source ones (and
    # the threads' off-CPU marks, read anew by each dump).
    kept = set(without_moment_marks(res.stdout).splitlines())
    assert all(l in without_moment_marks(text).splitlines() for l in kept)


SECRET = '''def park(ready, stop):
    ready.set()
    stop.wait()  # MARK: secret-park
'''


def test_root_only_file_not_shown(interp, keeper):
    """The target imported a root-only (0600) module, then became nobody:
    its user cannot read that file, so coroscope does not show it; nor
    once the file is readable by all but its directory root's alone,
    live or from a core."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a root-only file")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody'")
    if interp.version.startswith("3.6"):
        pytest.skip("the presentation tests target 3.7 - 3.14")
    secret_dir = tempfile.mkdtemp(prefix="coroscope-secret-")
    try:
        os.chmod(secret_dir, 0o755)
        secret = os.path.join(secret_dir, "secret_mod.py")
        with open(secret, "w") as f:
            f.write(SECRET)
        os.chmod(secret, 0o600)
        t = keeper.start_target(interp, "present_target.py", "3",
                                secret_dir)
        assert t.ready["uid"] == pwd.getpwnam("nobody").pw_uid
        # It wrote its ready file with its saved uid 0 for a moment.
        uid_line = r"^Uid:\s+%d\s+%d\b" % (t.ready["uid"], t.ready["uid"])
        assert wait_until(lambda: re.search(
            uid_line, open("/proc/%d/status" % t.pid).read(), re.M), 10), \
            open("/proc/%d/status" % t.pid).read()
        want = marker_text(secret, "secret-park")
        frame = r'File "%s", line %d, in (\S+\.)?park$' % (
            re.escape(secret), marker_line(secret, "secret-park"))
        res = run_coroscope("dump", t.pid)
        assert res.returncode == 0, res
        lines = res.stdout.splitlines()
        assert [l for l in lines if re.search(frame, l)], res
        assert want not in res.stdout, res
        # The target's own (world-readable) file is still shown.
        assert marker_text(SCRIPT, "hold-locals") in res.stdout, res
        # Readable by everyone: now it is shown, so it was the mode.
        os.chmod(secret, 0o644)
        res = run_coroscope("dump", t.pid)
        assert line_after(res.stdout.splitlines(), frame) == want, res
        # Readable by everyone, in a directory only root may enter: not
        # the target's to show either (a name it sets in co_filename
        # could point there).
        os.chmod(secret_dir, 0o700)
        res = run_coroscope("dump", t.pid)
        assert res.returncode == 0, res
        assert [l for l in res.stdout.splitlines() if re.search(frame, l)]
        assert want not in res.stdout, res
        assert marker_text(SCRIPT, "hold-locals") in res.stdout, res
        # A core says whose the process was (NT_PRPSINFO): the same,
        # then shown once the directory is nobody's.  (One interpreter:
        # a core takes seconds.)
        if interp.id == "3.12" and GCORE:
            core = take_gcore(t.pid, secret_dir)
            res = run_coroscope("core", core)
            assert res.returncode == 0, res
            assert [l for l in res.stdout.splitlines()
                    if re.search(frame, l)], res
            assert want not in res.stdout, res
            os.chown(secret_dir, t.ready["uid"], -1)
            res = run_coroscope("core", core)
            assert line_after(res.stdout.splitlines(), frame) == want, res
    finally:
        shutil.rmtree(secret_dir, ignore_errors=True)


STALE_APP = """import sys, threading
def park():
    print("ready", flush=True)
    threading.Event().wait()  # MARK: stale-park
park()
"""


def test_source_changed_since_is_not_shown(keeper, tmp_path):
    """A core read after a redeploy showed today's file at the lines the
    crashed code had: an os.abort() line under a frame that was in
    ctypes.string_at() (a helper's user round).  A source file changed
    after the process started (live), or after the core was written,
    is not shown, and a warning says which; the same file as old as
    the core is shown again."""
    from conftest import control_interpreter
    import time
    app = tmp_path / "app.py"
    app.write_text(STALE_APP)
    proc = keeper.spawn([control_interpreter().path, str(app)],
                        stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    want = marker_text(str(app), "stale-park")
    frame = r'File "%s", line %d, in park$' % (
        re.escape(str(app)), marker_line(str(app), "stale-park"))
    res = run_coroscope("dump", proc.pid)
    assert line_after(res.stdout.splitlines(), frame) == want, res
    core = take_gcore(proc.pid, tmp_path) if GCORE else None
    later = time.time() + 30
    os.utime(str(app), (later, later))
    said = ("coroscope: warning: 1 source file changed after the %s (" +
            str(app) + "): its lines are not shown")
    res = run_coroscope("dump", proc.pid)
    assert res.returncode == 0, res
    assert [l for l in res.stdout.splitlines() if re.search(frame, l)], res
    assert want not in res.stdout, res
    assert said % "process started" in res.stderr.splitlines(), res
    if core is None:
        return
    res = run_coroscope("core", core)
    assert res.returncode == 0, res
    assert want not in res.stdout, res
    assert said % "core was written" in res.stderr.splitlines(), res
    earlier = os.stat(core).st_mtime - 30
    os.utime(str(app), (earlier, earlier))
    res = run_coroscope("core", core)
    assert line_after(res.stdout.splitlines(), frame) == want, res
    assert "changed after" not in res.stderr, res


# Identical tasks --------------------------------------------------------------

def test_identical_tasks_one_group(text, doc, interp):
    tasks = parked_tasks(doc)
    assert len(tasks) == COUNT, "JSON lists every task: %d" % len(tasks)
    groups = [l for l in text.splitlines()
              if re.search(r"\(T\) \d+ tasks like this: ", l)]
    assert len(groups) == 1, text
    # named by the first and last name in the order one counts them
    # ("req-9" before "req-10"), whatever order the heap walk found them
    names = sorted((t["name"] for t in tasks), key=counting_order)
    assert "(T) %d tasks like this: %s .. %s pending" % (
        COUNT, names[0], names[-1]) in groups[0], groups
    # and so does their row under "Waits:"
    assert re.search(r"^  %d tasks like task '%s' at .* \.\. task '%s'$" % (
        COUNT, re.escape(names[0]), re.escape(names[-1])), text,
        re.MULTILINE), text
    # all on one Event: the group's wait is each one's
    assert ", waits for asyncio.Event (not set, %d waiters)" % COUNT \
        in groups[0], groups
    # 300 parked requests take a handful of lines, not thousands.
    section = text[text.index("\nTasks of loop"):]
    assert len(section.splitlines()) < 20, section
    assert not [t for t in tasks if ("%#x" % int(t["id"], 16)) in text]


def test_neighbours_that_differ_group_apart(interp, keeper):
    """Alike tasks are grouped by what their frames show (file, function,
    line), whether or not they are next to each other in the heap, and
    whether or not their code objects are one (targets/alike_target.py):
    the report's shortcut for neighbours with the same code objects must
    neither merge neighbours at two lines nor split twins."""
    count = 20
    script = target_script("alike_target.py")
    t = keeper.start_target(interp, "alike_target.py", str(count))
    res = run_coroscope("dump", t.pid)
    assert res.returncode == 0, res
    lines = res.stdout.splitlines()
    groups = {}
    for i, l in enumerate(lines):
        m = re.search(r"\(T\) (\d+) tasks like this: ", l)
        if m:
            frame = re.search(r"`- (\S+)  (\S+):(\d+)$", lines[i + 1])
            assert frame, lines[i:i + 2]
            key = (frame.group(1).split(".")[-1],
                   os.path.basename(frame.group(2)), int(frame.group(3)))
            assert key not in groups, res.stdout
            groups[key] = int(m.group(1))
    name = os.path.basename(script)
    assert groups == {
        ("parked_at", name, marker_line(script, "alike-a")): count,
        ("parked_at", name, marker_line(script, "alike-b")): count,
        ("twin", "<twin>", 3): 2 * count,
    }, res.stdout


def test_all_expands_groups(target, doc):
    res = run_coroscope("dump", "--all", target.pid)
    assert res.returncode == 0, res
    assert "tasks like this" not in res.stdout, res
    for t in parked_tasks(doc):
        pat = r"\(T\) %s %s pending" % (re.escape(t["name"]), t["id"])
        assert re.search(pat, res.stdout), (pat, res.stdout[:3000])


# Tree lines ------------------------------------------------------------------

def test_ascii_tree_lines_when_piped(text):
    tree = text[text.index("\nTasks of loop"):]
    assert any(g in tree for g in ASCII), tree
    assert not any(g in text for g in BOX), tree


def run_under_pty(args, env):
    master, slave = pty.openpty()
    proc = subprocess.Popen([COROSCOPE] + [str(a) for a in args],
                            stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    deadline = 30 * TIME_SCALE
    while True:
        ready, _, _ = select.select([master], [], [], deadline)
        if not ready:
            proc.kill()
            pytest.fail("coroscope under a pty did not finish")
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=30) == 0, proc.stderr.read()
    proc.stderr.close()
    return out.decode("utf-8", "replace").replace("\r\n", "\n")


def test_box_drawing_on_utf8_terminal(target):
    env = coroscope_env()
    env.pop("LC_ALL", None)
    env["LANG"] = "C.UTF-8"
    out = run_under_pty(["dump", target.pid], env)
    tree = out[out.index("\nTasks of loop"):]
    assert any(g in tree for g in BOX), tree
    assert not any(g in tree for g in ASCII), tree
    env["LC_ALL"] = "C"
    out = run_under_pty(["dump", target.pid], env)
    tree = out[out.index("\nTasks of loop"):]
    assert any(g in tree for g in ASCII) and \
        not any(g in tree for g in BOX), tree


# --locals and --max-items -------------------------------------------------------

def holder_locals(doc):
    for t in doc["threads"]:
        for f in t["frames"]:
            if f["function"] == "hold_locals":
                return f["locals"]
    pytest.fail("no hold_locals frame")


def test_max_items_cuts_containers(target):
    full = holder_locals(run_coroscope("dump", "--json", "--locals",
                                       target.pid).json())
    assert full["five"] == "[10, 20, 30, 40, 50]", full
    cut = holder_locals(run_coroscope("dump", "--json", "--locals",
                                      "--max-items", "2", target.pid).json())
    assert cut["five"] == "[10, 20, ...] (len 5)", cut
    res = run_coroscope("dump", "--locals", "--max-items", "2", target.pid)
    assert "five = [10, 20, ...] (len 5)" in res.stdout, res


def test_locals_name_types_functions_methods_modules(target):
    """As Python's repr() names them (qualified by module; the addresses
    are the target's own ids)."""
    ids = target.ready["ids"]
    got = holder_locals(run_coroscope("dump", "--json", "--locals",
                                      target.pid).json())
    instance = "<__main__.Widget object at %#x>" % ids["an_instance"]
    want = {
        "a_class": "<class '__main__.Widget'>",
        "an_error_class": "<class 'json.decoder.JSONDecodeError'>",
        "a_builtin_class": "<class 'KeyError'>",
        "a_function": "<function helper_function at %#x>" % ids["a_function"],
        "a_method": "<bound method Widget.poke of %s>" % instance,
        "a_module": "<module 'json'>",
        "an_instance": instance,
    }
    # a nested class and its instance, by __qualname__ as repr() says
    # them (before, by __name__: "<class '__main__.Part'>")
    want.update(target.ready["reprs"])
    assert "Widget.Part" in want["a_nested_class"], want
    wrong = dict((k, got.get(k)) for k in want if got.get(k) != want[k])
    assert not wrong, "got %r, want %r" % (
        wrong, dict((k, want[k]) for k in wrong))
    # The text report shows the same, escaped as any value.
    res = run_coroscope("dump", "--locals", target.pid)
    assert "a_method = %s" % want["a_method"] in res.stdout, res


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "101", "2x", ""])
def test_max_items_bad_values(bad):
    res = run_coroscope("dump", "--max-items", bad, "1")
    assert_one_error_line(res, 2, "--max-items")


def test_run_report_source_lines(tmp_path):
    """run's text report has the source lines too, and --no-source
    removes them (one interpreter: the report is the same code)."""
    py = "/usr/bin/python3.11"
    if not os.path.exists(py):
        pytest.skip("Debian's python3.11 is not installed")
    want = marker_text(SCRIPT, "hold-locals")
    for extra, shown in (([], True), (["--no-source"], False)):
        ready = str(tmp_path / ("ready%d.json" % len(extra)))
        argv = [COROSCOPE, "run", "--timeout", "4"] + extra + [
            "--", py, SCRIPT, ready, "3"]
        res = subprocess.run(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=coroscope_env(), timeout=60 * TIME_SCALE)
        err = res.stderr.decode("utf-8", "replace")
        assert res.returncode == 124, err
        assert re.search(r'File "%s", line %d, in (\S+\.)?hold_locals' % (
            re.escape(SCRIPT), marker_line(SCRIPT, "hold-locals")), err), err
        assert (want in err) == shown, (extra, err)


def test_blank_task_names_are_quoted(keeper):
    """A task named "" showed as "(T)  0x7f.. pending", one named " pad "
    with its blanks lost among the line's (a helper's user round): such
    names are quoted in the tree now, with --all each on its line; a
    plain name is not."""
    interp = control_interpreter()
    if interp is None or tuple(
            int(x) for x in interp.version.split(".")[:2]) < (3, 8):
        pytest.skip("no interpreter with task names (3.8 on)")
    target = keeper.start_target(interp, "blank_task_names.py")
    out = run_coroscope("dump", "--all", target.pid).stdout
    tree = [l.split("(T) ", 1)[1] for l in out.splitlines() if "(T) " in l]
    assert [l for l in tree if l.startswith("'' 0x")], tree
    assert [l for l in tree if l.startswith("' pad ' 0x")], tree
    assert [l for l in tree if l.startswith("plain 0x")], tree
