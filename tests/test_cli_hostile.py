"""Hostile targets (issue 16, the command-line side).

- 16.1: names the target chooses (thread, task, coroutine __qualname__,
  code file name, co_name) cannot forge report lines or send control
  sequences: every output escapes them.
- 16.2: `run` keeps the command's exit status when the command dies
  while a SIGUSR1 dump holds it.
- 16.10: deep await chains print in order, once each, with bounded
  indentation.
- 16.11: a lock deadlock is found whatever the source layout.
- 16.12: an unwritable --report file or GITHUB_STEP_SUMMARY is refused
  before the command starts.
- The target's command line (argv is its own) and the pytest node id it
  runs (whose directory names it chose) are escaped too: until
  2026-12-02 watch's summary heading and the dump's "Test being run"
  line printed them raw.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import (COROSCOPE, DEBIAN, TIME_SCALE,
                      assert_no_sanitizer_report, coroscope_env, debian_with,
                      interpreter, marker_line, proc_status, run_coroscope,
                      target_script, tracer_process)

# Task names and code.replace() need 3.8+.
HOSTILE_IDS = ("3.8", "3.12", "3.13", "3.14")
HOSTILE_PYS = [i for i in (interpreter(x) for x in HOSTILE_IDS) if i]
RUN_IDS = ("3.12", "3.11-debian", "3.8")
RUN_PYS = [i for i in (interpreter(x) for x in RUN_IDS) if i]
RUN_SLACK = 60.0

# What must never reach an output raw: ESC, BEL, CR, DEL, and the C1
# control CSI (U+009B), all of which the hostile names hold.
RAW_CONTROLS = ("\x1b", "\x07", "\r", "\x7f", "\x9b")
# Whole lines the names try to forge.
FORGED_LINES = ('Thread 1 "forged"', "Traceback (most recent call last):",
                '  File "/etc/passwd", line 1, in forged')


def ids(pys):
    return [p.id for p in pys]


def default_signals():
    """For a child: default dispositions of the signals tests send (the
    suite may run with SIGINT or others ignored)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1,
                signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def assert_no_raw_controls(text, what):
    for c in RAW_CONTROLS:
        assert c not in text, "%s holds a raw %r:\n%r" % (what, c, text[:3000])


def assert_no_forged_lines(text, what, allowed_tracebacks):
    lines = text.splitlines()
    for forged in FORGED_LINES[::2]:
        assert forged not in lines, "%s: forged line %r" % (what, forged)
    n = sum(1 for line in lines if line == FORGED_LINES[1])
    assert n <= allowed_tracebacks, \
        "%s: %d Traceback lines for %d threads" % (what, n, allowed_tracebacks)


def threads_with_frames(pid):
    doc = run_coroscope("dump", "--json", pid).json()
    return doc, sum(1 for t in doc["threads"] if t["frames"])


# ---------------------------------------------------------------------------
# 16.1: escaping

@pytest.mark.parametrize("py", HOSTILE_PYS, ids=ids(HOSTILE_PYS))
def test_hostile_names_in_dump(py, keeper):
    target = keeper.start_target(py, "hostile_names.py")
    hostile = target.ready["name"]
    doc, nthreads = threads_with_frames(target.pid)
    # JSON keeps the names exact, and escapes them.
    names = [t["name"] for t in doc["threads"]]
    assert hostile in names, names
    assert any(t["name"] == hostile for t in doc["tasks"]), doc["tasks"]
    assert any(t["name"] == target.ready["quoted"] for t in doc["tasks"]), \
        doc["tasks"]
    for args in (["dump"], ["dump", "--locals"]):
        res = run_coroscope(*(args + [target.pid]))
        assert res.returncode == 0, res
        assert_no_raw_controls(res.stdout, "text")
        assert_no_forged_lines(res.stdout, "text", nthreads)
        # The names are there, escaped, each on the line it belongs to.
        assert '"evil\\nThread 1 \\"forged\\"\\nTraceback' in res.stdout, \
            res
        # Its quotes and backslashes backslashed, its NUL and lone
        # surrogate shown: one name, whole (before: 'x' at evil.py...).
        assert "task 'x\\' at evil.py:1 in forged\\\\n\\x00hidden\\udcff' " \
            in res.stdout, res
        assert "/nonexistent/evil\\n\\x1b]0;pwned\\x07\\x1b[2J" in res.stdout
        assert "\\r\\t\\xc2\\x9b31m\\x7fend" in res.stdout
        # (after the tree lines: "|- ", "`- ")
        task_lines = [l for l in res.stdout.splitlines()
                      if l.strip(" |`-").startswith("(T) evil\\n")]
        assert len(task_lines) == 1, res
    res = run_coroscope("dump", "--format", "dot", target.pid)
    assert res.returncode == 0, res
    assert_no_raw_controls(res.stdout, "dot")
    for line in res.stdout.splitlines():
        assert re.match(r'^(digraph coroscope \{|  .*;|\})$', line), \
            "not a whole DOT statement: %r" % line
    assert 'label="evil\\\\nThread 1 \\"forged\\"' in res.stdout, res
    raw = subprocess.run([COROSCOPE, "dump", "--json", str(target.pid)],
                         stdout=subprocess.PIPE, env=coroscope_env(),
                         timeout=60 * TIME_SCALE).stdout
    for c in RAW_CONTROLS:
        assert c.encode("utf-8") not in raw, "JSON holds a raw %r" % c


@pytest.mark.parametrize("py", HOSTILE_PYS[:1], ids=ids(HOSTILE_PYS[:1]))
def test_hostile_names_in_watch(py, keeper):
    """watch's lines and summary escape the names as dump does."""
    target = keeper.start_target(py, "hostile_names.py")
    res = run_coroscope("watch", "--for", "1.5s", "--interval", "0.3s",
                        "--stuck", "0.5s", target.pid)
    assert res.returncode == 0, res
    assert_no_raw_controls(res.stdout, "watch")
    assert_no_forged_lines(res.stdout, "watch", 0)
    # The parked thread and task are reported stuck, by their escaped name.
    assert "'evil\\nThread 1 \\\"forged\\\"\\nTraceback" in res.stdout, res


# A directory name that tries to forge (no "/": it is a path's part).
EVIL_DIR = "e\x1b]0;pwned\x07\x1b[2J\r\nThread 1 \"forged\"\n"


def test_command_line_cut_between_characters(keeper):
    """watch's summary heading shows the first 60 bytes of the target's
    command line (argv is the target's own): started through a symlink
    in a directory of 2-byte characters, byte 60 falls inside one.  The
    cut comes before that character (it once left its first byte, shown
    as \\xc3: a byte the name does not have); the controls in EVIL_DIR
    never reach it raw either."""
    debian_with("json")
    import shutil
    import tempfile
    # "/tmp/" and 27 "é" are 59 bytes: the 60th is the first of the 28th
    evil = tempfile.mkdtemp(prefix="\u00e9" * 30 + EVIL_DIR, dir="/tmp")
    try:
        link = os.path.join(evil, "py")
        os.symlink(DEBIAN, link)
        target = keeper.start_target(link, "watch_target.py")
        proc = subprocess.run([COROSCOPE, "watch", "--for", "1s",
                               "--interval", "0.3s", "--stuck", "0.5s",
                               str(target.pid)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=coroscope_env(),
                              timeout=60 * TIME_SCALE)
    finally:
        shutil.rmtree(evil, ignore_errors=True)
    assert proc.returncode == 0, proc
    out = proc.stdout.decode("utf-8")   # strict: no lone byte
    assert_no_raw_controls(out, "watch")
    assert "pid %d (/tmp/%s): " % (target.pid, "\u00e9" * 27) in out, \
        out


def test_hostile_test_node_in_dump(tmp_path):
    """A pytest run of a test in a directory named to send control
    sequences, hung: the dump's "Test being run" line and the cause's
    escape the node id."""
    debian_with("pytest", "pytest_asyncio")
    # (pytest finds no file whose path holds a newline or a "[")
    evil_dir = "e\x1b]0;pwned\x07\x1bc\x7f\x9b"
    suite = target_script("graph_pytest_suite.py")
    (tmp_path / evil_dir).mkdir()
    with open(suite) as src, \
            open(str(tmp_path / evil_dir / "test_evil.py"), "w") as dst:
        dst.write(src.read())
    # (the node id is relative to the rootdir: it starts with EVIL_DIR)
    rc, err = run_coroscope_run(
        ["--timeout", "4", "--", DEBIAN, "-m", "pytest", "-q", "-p",
         "no:cacheprovider", "--rootdir", tmp_path,
         "%s/%s/test_evil.py::test_hangs" % (tmp_path, evil_dir)])
    assert rc == 124, err[-3000:]
    assert_no_raw_controls(err, "run")
    escaped = "e\\x1b]0;pwned\\x07\\x1bc\\x7f\\xc2\\x9b/test_evil.py"
    assert "\nTest being run: " + escaped in err, err[-3000:]
    assert "test being run: " + escaped in err, err[-3000:]

def run_coroscope_run(args, env=None, timeout=RUN_SLACK):
    env = coroscope_env(env)
    proc = subprocess.run([COROSCOPE, "run"] + [str(a) for a in args],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env,
                          timeout=timeout * TIME_SCALE,
                          preexec_fn=default_signals)
    err = proc.stderr.decode("utf-8", "replace")
    assert_no_sanitizer_report(err, "from coroscope run")
    return proc.returncode, err


@pytest.mark.parametrize("py", RUN_PYS[:1], ids=ids(RUN_PYS[:1]))
def test_hostile_names_in_run_report(py, tmp_path):
    report = tmp_path / "report.json"
    summary = tmp_path / "summary.md"
    summary.write_text("")
    code, err = run_coroscope_run(
        ["--timeout", "4", "--sample-last", "1", "--kill-after", "1",
         "--report", report, "--",
         py.path, target_script("hostile_names.py"), tmp_path / "ready"],
        env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 124, err
    assert_no_raw_controls(err, "run's report")
    # 4 threads with Python frames: main, the sleeper, the two lockers.
    assert_no_forged_lines(err, "run's report", 4)
    assert "evil\\nThread 1" in err, err
    # The two hostile threads deadlock on `with second: pass`: the
    # wait-for graph proves it, names escaped.
    assert "lock cycle: thread " in err, err
    # ...and where each took its first lock, at the hostile file's line
    # (its name escaped like the rest: checked above over all of err)
    assert "holding threading.Lock 0x" in err, err
    md = summary.read_text(encoding="utf-8", errors="replace")
    assert_no_raw_controls(md, "step summary")
    for line in md.splitlines():
        assert not line.startswith(("Thread 1", "Traceback", "  File")), \
            "forged line in the step summary: %r\n%s" % (line, md)
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert doc["causes"][0]["kind"] == "lock_cycle", doc["causes"]


# ---------------------------------------------------------------------------
# 16.2: the exit status of a command killed during a dump

@pytest.mark.parametrize("py", RUN_PYS[:1], ids=ids(RUN_PYS[:1]))
def test_status_kept_when_killed_during_dump(py):
    env = coroscope_env({"COROSCOPE_TEST_HOLD_MS": "3000"})
    proc = subprocess.Popen(
        [COROSCOPE, "run", "--", py.path, "-c",
         "import time; print('up', flush=True); time.sleep(120)"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, preexec_fn=default_signals)
    try:
        assert proc.stdout.readline() == b"up\n"
        with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
            child = int(f.read().split()[0])
        os.kill(proc.pid, signal.SIGUSR1)
        # Kill the command while the dump holds it stopped.
        deadline = time.monotonic() + 20 * TIME_SCALE
        held = False
        while time.monotonic() < deadline and not held:
            status = proc_status(child) or {}
            held = (tracer_process(int(status.get("TracerPid", "0"))) ==
                    proc.pid and "(tracing stop)" in status.get("State", ""))
            if not held:
                time.sleep(0.005)
        assert held, "the dump never stopped the command"
        os.kill(child, signal.SIGKILL)
        out, err = proc.communicate(timeout=RUN_SLACK * TIME_SCALE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err.decode("utf-8", "replace")
    assert proc.returncode == 128 + signal.SIGKILL, err
    assert "was lost" not in err, err


# ---------------------------------------------------------------------------
# 16.10: deep chains

DEEP_TASKS = 10000
DEEP_GENS = 200
MAX_INDENT = 16 * 4


@pytest.mark.parametrize("py", HOSTILE_PYS[:2], ids=ids(HOSTILE_PYS[:2]))
def test_deep_chains_in_order_bounded(py, keeper):
    target = keeper.start_target(py, "deep_chains.py", str(DEEP_TASKS),
                                 str(DEEP_GENS), timeout=120)
    res = run_coroscope("dump", target.pid, timeout=240)
    assert res.returncode == 0, res
    lines = res.stdout.splitlines()
    chain = [int(m.group(1)) for m in
             (re.search(r"\(T\) chain-(\d+) ", l) for l in lines) if m]
    assert chain == list(range(DEEP_TASKS)), \
        "chain printed out of order or twice: %d lines, first wrong at %r" % (
            len(chain), next((i for i, k in enumerate(chain) if k != i), None))
    widest = max(len(l) - len(l.lstrip(" ")) for l in lines)
    assert widest <= MAX_INDENT, "indentation grew to %d" % widest
    link = marker_line(target.script, "agen-link")
    gens = [l for l in lines if l.endswith("deep_chains.py:%d" % link)]
    assert len(gens) == DEEP_GENS - 1, len(gens)
    depths = [int(m.group(1)) for m in
              (re.search(r"\(depth (\d+)\) agen ", l) for l in gens) if m]
    assert depths and depths == sorted(depths) and \
        len(set(depths)) == len(depths), depths[:40]


# ---------------------------------------------------------------------------
# 16.11: a deadlock whatever the source layout

@pytest.mark.parametrize("py", RUN_PYS, ids=ids(RUN_PYS))
def test_oneline_deadlock_found(py, tmp_path):
    script = target_script("run_deadlock_oneline.py")
    report = tmp_path / "report.json"
    # The deadlock must form before the sampled last second begins (a
    # thread seen moving in it is not blocked): three seconds for the
    # interpreter to start, even on a loaded machine (with --timeout 2
    # it once formed too late while the suite ran on both CPUs).
    code, err = run_coroscope_run(
        ["--timeout", "4", "--sample-last", "1", "--kill-after", "1",
         "--report", report, "--", py.path, script, tmp_path / "pids"])
    assert code == 124, err
    assert "lock cycle: thread " in err, err
    causes = json.loads(report.read_text())["causes"]
    assert causes and causes[0]["kind"] == "lock_cycle", causes
    details = " ".join(causes[0]["details"])
    for mark in ("a-blocked", "b-blocked"):
        assert "run_deadlock_oneline.py:%d" % marker_line(script, mark) \
            in details, details


# ---------------------------------------------------------------------------
# 16.12: unwritable outputs refused at start

@pytest.mark.parametrize("where", ["report-dir", "report-missing", "summary"])
def test_unwritable_output_refused_at_start(where, tmp_path):
    marker = tmp_path / "started"
    args = ["--timeout", "60"]
    env = {}
    if where == "report-dir":
        args += ["--report", tmp_path]
    elif where == "report-missing":
        args += ["--report", tmp_path / "no" / "such" / "dir.json"]
    else:
        env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "no" / "summary.md")
    start = time.monotonic()
    code, err = run_coroscope_run(
        args + ["--", "sh", "-c", "touch %s; sleep 60" % marker], env=env,
        timeout=30)
    assert code == 2, err
    assert time.monotonic() - start < 10 * TIME_SCALE
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("coroscope: run: cannot "
                                                   "write"), err
    assert not marker.exists(), "the command was started"
