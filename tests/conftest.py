"""Shared machinery for coroscope's functional tests.

- Interpreter discovery: every pyenv CPython 3.6 - 3.13, Debian's stripped
  /usr/bin/python3.11 and a python3.14 and a free-threaded python3.14t if
  installed.  A test that
  takes an `interp` argument runs once per interpreter (module scope, so a
  module starts each target once per interpreter), and the session ends
  with a "Python versions covered: ..." line.
- ProcessKeeper (fixtures `keeper`, `module_keeper`): starts targets, waits
  for their ready file, and kills everything it started at teardown.
- run_coroscope(): runs the tool with a timeout and checks that no
  sanitizer report appeared.

Environment: COROSCOPE (binary under test, default ./coroscope of this
checkout),
COROSCOPE_SANITIZED=1 (sanitizer build: longer timeouts),
COROSCOPE_TEST_TSAN=1 (with it: the ThreadSanitizer build, which looks
for races only: a test that dumps one target several ways may keep to
the ways that run on threads),
COROSCOPE_TEST_PYTHONS=3.6,3.12,... (run the per-interpreter tests on these
ids only; tests that ask for one version by name still run, but those
that take a list of their own skip the ones left out (`left_out()`); the
summary names the ones left out),
COROSCOPE_TEST_SANITIZER_PYTHONS=3.6,... (`make check`'s release pass:
leave to the sanitizer pass that follows, which runs the same ones
against the sanitizer build, the per-interpreter tests on these ids (an
`interp` or `py` parameter's, or an `interp_id` or `ident` parameter:
test_watch.py's, and those of tests that name their interpreters) and
the tests of no interpreter; the slow and packaging tests, which it
does not run, and those it runs on other interpreters only
(@pytest.mark.sanitizer_runs_on), stay.  So each test runs once in
`make check`; @pytest.mark.not_sanitized keeps one there).  Under
COROSCOPE_SANITIZED=1 a test naming an interpreter COROSCOPE_TEST_PYTHONS
leaves out is skipped, whatever its parameter's name; with
COROSCOPE_TEST_AFTER_RELEASE=1 too (`make check`'s sanitizer pass), a
test of no interpreter that skips for the pass's sake fails: neither
pass ran it.  Works with pytest-xdist (`-n 2`): the summary
is gathered from the reports, not from worker state.
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(TESTS_DIR)
TARGETS_DIR = os.path.join(TESTS_DIR, "targets")

COROSCOPE = os.environ.get("COROSCOPE", os.path.join(REPO_DIR, "coroscope"))
SANITIZED = os.environ.get("COROSCOPE_SANITIZED") == "1"
TSAN = SANITIZED and os.environ.get("COROSCOPE_TEST_TSAN") == "1"
# Sanitizer builds are slower; scale every timeout that waits on coroscope.
TIME_SCALE = 3.0 if SANITIZED else 1.0

READY_TIMEOUT = 20.0
COROSCOPE_TIMEOUT = 30.0


def _default_signal_dispositions():
    """Undo an inherited SIG_IGN for the signals the tests send.

    A CI job started in the background, without job control, runs the
    suite with SIGINT (and maybe SIGQUIT, SIGHUP) ignored; exec keeps an
    ignored signal ignored, so every coroscope and target the tests start
    would ignore it too, and coroscope rightly leaves an ignored signal
    ignored (nohup).  The tests that check what a signal does need the
    default: set it here, in every pytest process (xdist workers import
    this too), so the children inherit it.  A Python handler is reset to
    SIG_DFL by exec.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)


_default_signal_dispositions()

SANITIZER_SIGNS = ("AddressSanitizer", "LeakSanitizer",
                   "UndefinedBehaviorSanitizer", "runtime error:",
                   "ThreadSanitizer", "MemorySanitizer")


# ---------------------------------------------------------------------------
# Interpreters

class Interpreter(object):
    def __init__(self, ident, path, label, version, note=""):
        self.id = ident          # test id: "3.6", "3.11-debian", "3.14"
        self.path = path         # real executable
        self.label = label       # for the summary line
        self.version = version   # platform.python_version()
        self.note = note         # e.g. "debian, stripped"
        # a free-threaded (--disable-gil) build: no GIL is ever held
        self.free_threaded = note == "free-threaded"

    def __repr__(self):
        return "Interpreter(%s, %s)" % (self.id, self.path)

    def describe(self):
        if self.note:
            return "%s (%s)" % (self.version, self.note)
        return self.version


def _pyenv_root():
    try:
        out = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=10,
                             universal_newlines=True)
        root = out.stdout.strip()
        if out.returncode == 0 and root and os.path.isdir(root):
            return root
    except (OSError, subprocess.SubprocessError):
        pass
    return "/root/.pyenv"


def _probe(path):
    """(real executable, version) of a working interpreter, else None."""
    code = ("import platform, sys; "
            "print(sys.executable); print(platform.python_version())")
    try:
        out = subprocess.run([path, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=20,
                             universal_newlines=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    if out.returncode != 0 or len(lines) != 2:
        return None
    real = os.path.realpath(lines[0]) if lines[0] else path
    return real, lines[1]


def _is_stripped(path):
    try:
        out = subprocess.run(["file", "-b", "-L", path],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=10,
                             universal_newlines=True)
        return ", stripped" in out.stdout
    except (OSError, subprocess.SubprocessError):
        return False


def discover_interpreters():
    """([Interpreter], [description of each expected but absent one])."""
    found, absent, seen = [], [], set()

    def add(ident, path, note=""):
        probed = _probe(path)
        if probed is None:
            absent.append("%s (%s does not run)" % (ident, path))
            return
        real, version = probed
        if real in seen:
            return
        seen.add(real)
        found.append(Interpreter(ident, real, ident, version, note))

    root = _pyenv_root()
    for minor in range(6, 14):
        pattern = os.path.join(root, "versions", "3.%d.*" % minor, "bin",
                               "python3.%d" % minor)
        paths = sorted(p for p in glob.glob(pattern) if os.access(p, os.X_OK))
        if not paths:
            absent.append("3.%d (no %s)" % (minor, pattern))
        for p in paths:
            ident = "3.%d" % minor
            if len(paths) > 1:
                ident = p.split(os.sep)[-3]      # the version directory
            add(ident, p)

    debian = "/usr/bin/python3.11"
    if os.access(debian, os.X_OK):
        add("3.11-debian", debian,
            "debian, stripped" if _is_stripped(debian) else "debian")
    else:
        absent.append("3.11-debian (no %s)" % debian)

    # Built from source (DEVELOPERS.md): the default build and the
    # free-threaded one (3.14t), each on PATH or under /opt.
    for ident, exe, note in (("3.14", "python3.14", ""),
                             ("3.14t", "python3.14t", "free-threaded")):
        candidates = []
        on_path = shutil.which(exe)
        if on_path:
            candidates.append(on_path)
        candidates.append("/opt/python%s/bin/%s" % (ident, exe))
        for p in candidates:
            if os.access(p, os.X_OK) and _probe(p) is not None:
                add(ident, p, note)
                break
        else:
            absent.append("%s (no %s on PATH or in /opt/python%s)"
                          % (ident, exe, ident))
    return found, absent


INTERPRETERS, ABSENT_INTERPRETERS = discover_interpreters()


def _parametrized_interpreters():
    """(interpreters every per-interpreter test runs on, ids left out)."""
    wanted = os.environ.get("COROSCOPE_TEST_PYTHONS", "").strip()
    if not wanted:
        return INTERPRETERS, []
    ids = set(w.strip() for w in wanted.split(",") if w.strip())
    chosen = [i for i in INTERPRETERS if i.id in ids]
    left_out = [i.id for i in INTERPRETERS if i.id not in ids]
    return chosen, left_out


PARAM_INTERPRETERS, LEFT_OUT_INTERPRETERS = _parametrized_interpreters()


def _sanitizer_interpreters():
    wanted = os.environ.get("COROSCOPE_TEST_SANITIZER_PYTHONS", "")
    return set(w.strip() for w in wanted.split(",") if w.strip())


# The ids whose per-interpreter tests the sanitizer pass runs instead.
SANITIZER_INTERPRETERS = _sanitizer_interpreters()


def left_out(ident):
    """Whether COROSCOPE_TEST_PYTHONS leaves this interpreter out (for
    tests that name their own interpreters)."""
    return ident in LEFT_OUT_INTERPRETERS


def interpreter(ident):
    """The interpreter with this id, or None."""
    for i in INTERPRETERS:
        if i.id == ident:
            return i
    return None


def interpreter_or_skip(ident):
    """The interpreter with this id, or a skip saying why there is none
    (for tests that name their own interpreters)."""
    if left_out(ident):
        pytest.skip("interpreter %s left out by COROSCOPE_TEST_PYTHONS"
                    % ident)
    interp = interpreter(ident)
    if interp is None:
        pytest.skip("interpreter %s is not installed here" % ident)
    return interp


def interpreters_importing(idents, module):
    """Those of the interpreters idents that COROSCOPE_TEST_PYTHONS leaves
    in and that can import module (a framework from Debian's packages or
    installed under pyenv)."""
    found = []
    for ident in idents:
        interp = None if left_out(ident) else interpreter(ident)
        if interp is not None and subprocess.run(
                [interp.path, "-c", "import " + module],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            found.append(interp)
    return found


def control_interpreter():
    """One interpreter for tests where the Python version does not matter."""
    for ident in ("3.12", "3.11", "3.13", "3.10", "3.9", "3.8", "3.7",
                  "3.6", "3.11-debian", "3.14"):
        i = interpreter(ident)
        if i is not None:
            return i
    if INTERPRETERS:
        return INTERPRETERS[0]
    return None


DEBIAN = "/usr/bin/python3.11"


def debian_with(*modules):
    """Skip, saying why, unless Debian's python3.11 imports these modules
    (Debian's python3-X packages, installed by `make deps`)."""
    if not os.path.exists(DEBIAN):
        pytest.skip("Debian's python3.11 is not installed")
    probe = subprocess.run([DEBIAN, "-c", "import " + ", ".join(modules)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode:
        pytest.skip("%s not installed for %s (make deps)"
                    % (", ".join(modules), DEBIAN))


def pyenv_python27():
    p = os.path.join(_pyenv_root(), "versions", "2.7.18", "bin", "python2.7")
    if os.access(p, os.X_OK):
        return p
    found = sorted(glob.glob(os.path.join(_pyenv_root(), "versions", "2.7.*",
                                          "bin", "python2.7")))
    return found[0] if found else None


def pytest_generate_tests(metafunc):
    if "interp" in metafunc.fixturenames:
        # A test whose code under test does not depend on the version
        # (@pytest.mark.interpreters("3.6", ...)) runs on those of the
        # ones named that are here, or on the first one here.
        chosen = PARAM_INTERPRETERS
        mark = metafunc.definition.get_closest_marker("interpreters")
        if mark is not None:
            chosen = [i for i in PARAM_INTERPRETERS
                      if i.id in mark.args] or PARAM_INTERPRETERS[:1]
        # Module scope: a module-scoped target fixture starts once per
        # interpreter, and pytest groups each interpreter's tests together.
        metafunc.parametrize("interp", chosen,
                             ids=[i.id for i in chosen],
                             scope="module")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: slow or timing-sensitive; the sanitizer run skips it")
    config.addinivalue_line(
        "markers", "packaging: tests `make static` / `make wheel` artifacts, "
        "not $COROSCOPE; the sanitizer run skips it")
    config.addinivalue_line(
        "markers", "interpreters(*ids): run only on these interpreters "
        "(those here; else the first one here)")
    config.addinivalue_line(
        "markers", "sanitizer_runs_on(*ids): the sanitizer pass runs this "
        "test on these interpreters only, and skips it on the others")
    config.addinivalue_line(
        "markers", "not_sanitized(why): the sanitizer pass skips this test "
        "of no interpreter parameter (it names one the pass leaves out, "
        "or cannot run it), so `make check`'s release pass keeps it")


_INTERP_ID = re.compile(r"^3\.\d+(t|-debian)?$")


def _interp_id(item):
    """The id of the interpreter a per-interpreter test runs on, or None:
    that of an Interpreter among its parameters (`interp`, `py`, a
    fixture's), or the `interp_id` or `ident` a test that names its own
    interpreters takes (test_watch.py's; test_run.py's, among others,
    calling interpreter_or_skip(ident)), where that is an interpreter's
    id."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for value in callspec.params.values():
        if isinstance(value, Interpreter):
            return value.id
    ident = callspec.params.get("interp_id", callspec.params.get("ident"))
    return ident if isinstance(ident, str) and _INTERP_ID.match(ident) \
        else None


def _sanitizer_runs(item, ident, has):
    """Whether the sanitizer pass runs this test, has(id) telling whether
    it runs on that interpreter: not the slow and packaging tests (it
    leaves them out by -m, the Makefile's check-sanitize), nor those
    marked not_sanitized; on its interpreters, those sanitizer_runs_on
    names where it names some; a test of no interpreter, always."""
    if any(item.get_closest_marker(m) for m in
           ("slow", "packaging", "not_sanitized")):
        return False
    if ident is None:
        return True
    only = item.get_closest_marker("sanitizer_runs_on")
    return has(ident) and (only is None or ident in only.args)


def _left_to_sanitizer(item, ident):
    """Whether `make check`'s release pass leaves this test to the
    sanitizer pass, which runs it.  (A test of no interpreter ran in
    both passes: 380 tests, some 850 s of the release pass's test time,
    180 s of its wall.)"""
    return bool(SANITIZER_INTERPRETERS) and _sanitizer_runs(
        item, ident, lambda i: i in SANITIZER_INTERPRETERS)


def _sanitizer_skip(item, ident):
    """In the sanitizer pass, why it skips this test, or None."""
    if _sanitizer_runs(item, ident, lambda i: not left_out(i)):
        return None
    why = item.get_closest_marker("not_sanitized")
    if why is not None:
        return why.args[0]
    if ident is not None and left_out(ident):
        # (a test taking its interpreter by a parameter of its own: the
        # release pass runs it there)
        return "interpreter %s left out by COROSCOPE_TEST_PYTHONS" % ident
    only = item.get_closest_marker("sanitizer_runs_on")
    if only is not None:
        return "the sanitizer run covers %s" % ", ".join(only.args)
    return None      # slow, packaging: -m leaves it out


def pytest_collection_modifyitems(session, config, items):
    kept, left = [], []
    for item in items:
        ident = _interp_id(item)
        why = _sanitizer_skip(item, ident) if SANITIZED else None
        if why is not None:
            item.add_marker(pytest.mark.skip(reason=why))
        if not SANITIZED and _left_to_sanitizer(item, ident):
            left.append(item)
        else:
            kept.append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
    items.sort(key=_file_rank)


# The files whose tests take longest (watch's and run's wait out their
# --for and --timeout, test_dist.py builds a wheel), first: pytest-xdist
# hands the workers tests in collection order, and with these last, in
# alphabetical order, two of five workers were still in them for the
# release pass's last 90 s, the others idle.  (A stable sort: each
# file's tests keep their order, and a module's fixtures their scope.)
LONG_FILES = ("test_watch.py", "test_dist.py", "test_run_apps.py",
              "test_run.py", "test_failed_tasks.py", "test_run_serves.py")


def _file_rank(item):
    name = os.path.basename(str(item.fspath))
    return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)


# Set by `make check` for its sanitizer pass, whose release pass left it
# the tests of no interpreter.
AFTER_RELEASE = os.environ.get("COROSCOPE_TEST_AFTER_RELEASE") == "1"


def _lost_to_the_handoff(item, report):
    """A test of no interpreter that skips in `make check`'s sanitizer
    pass for a reason of the pass's (an interpreter it leaves out, the
    sanitizer) ran in neither pass: it fails, saying to mark it
    not_sanitized, so that the release pass keeps it."""
    if not (SANITIZED and AFTER_RELEASE and report.skipped and
            report.when in ("setup", "call") and _interp_id(item) is None) \
            or item.get_closest_marker("skip"):
        return      # (a marker's skip: the release pass kept the test)
    why = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
    if "COROSCOPE_TEST_PYTHONS" not in why and "sanitizer" not in why and \
            "left out" not in why:
        return
    report.outcome = "failed"
    report.longrepr = ("skipped in the sanitizer pass (%s), which `make "
                       "check`'s release pass left it to: it ran in "
                       "neither; mark it @pytest.mark.not_sanitized(why)"
                       % why)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Tag the report with its interpreter: under pytest-xdist the summary
    # is written by the controller, which sees reports, not items.
    outcome = yield
    report = outcome.get_result()
    _lost_to_the_handoff(item, report)
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "interp" in callspec.params:
        report.user_properties.append(
            ("coroscope_interp", callspec.params["interp"].id))


def pytest_runtest_logreport(report):
    ident = dict(report.user_properties).get("coroscope_interp")
    if ident is None:
        return
    results = _SESSION_RESULTS.setdefault(
        ident, {"passed": 0, "failed": 0, "skipped": 0})
    if report.when == "call" and report.passed:
        results["passed"] += 1
    elif report.failed:
        results["failed"] += 1
    elif report.skipped and report.when in ("setup", "call"):
        results["skipped"] += 1


_SESSION_RESULTS = {}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = _SESSION_RESULTS
    covered, failing = [], []
    for i in INTERPRETERS:
        r = results.get(i.id)
        if r is None:
            continue
        if r["passed"]:
            covered.append(i.describe())
        if r["failed"]:
            failing.append("%s (%d failed)" % (i.describe(), r["failed"]))
    not_run = [i.describe() for i in INTERPRETERS
               if i.id in results and not results[i.id]["passed"]]
    write = terminalreporter.write_line
    write("Python versions covered: %s" % (", ".join(covered) or "none"))
    if failing:
        write("Python versions with failures: %s" % ", ".join(failing))
    if not_run:
        write("Python versions tested but no test passed: %s"
              % ", ".join(not_run))
    left = [i.describe() for i in PARAM_INTERPRETERS
            if i.id in SANITIZER_INTERPRETERS]
    if left:
        # (Under pytest-xdist the workers collect and deselect: the
        # controller cannot count what they left.)
        write("Python versions left to the sanitizer pass but for their "
              "slow tests (COROSCOPE_TEST_SANITIZER_PYTHONS), with the "
              "tests of no interpreter: %s" % ", ".join(left))
    if LEFT_OUT_INTERPRETERS:
        write("Python versions left out by COROSCOPE_TEST_PYTHONS: %s"
              % ", ".join(LEFT_OUT_INTERPRETERS))
    if ABSENT_INTERPRETERS:
        write("Python versions absent: %s" % ", ".join(ABSENT_INTERPRETERS))


# ---------------------------------------------------------------------------
# Target sources

def target_script(name):
    return os.path.join(TARGETS_DIR, name)


def marker_line(script, name):
    """The line number of "# MARK: name" in script (exactly one)."""
    tag = re.compile(r"#\s*MARK:\s*%s\s*$" % re.escape(name))
    hits = []
    with open(script) as f:
        for number, text in enumerate(f, 1):
            if tag.search(text):
                hits.append(number)
    assert len(hits) == 1, "marker %r in %s: %r" % (name, script, hits)
    return hits[0]


# ---------------------------------------------------------------------------
# Processes

def wait_until(predicate, timeout, interval=0.02):
    """Poll predicate() until it is true; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def every_status():
    """(pid, /proc/PID/status as a dict) of every process in /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_status(int(entry))
            if st is not None:
                yield int(entry), st


def proc_status(pid, tid=None):
    """/proc/PID[/task/TID]/status as a dict, or None once it is gone."""
    path = "/proc/%d/status" % pid
    if tid is not None:
        path = "/proc/%d/task/%d/status" % (pid, tid)
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def task_ids(pid):
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return []


def tracer_process(tracer):
    """The process of a TracerPid, which names the tracing thread
    (coroscope traces from a thread of its own); 0 stays 0."""
    if tracer <= 0:
        return tracer
    st = proc_status(tracer)
    if st is None:
        return tracer
    return int(st.get("Tgid", tracer))


def task_tracers(pid):
    """{tid: the process tracing it, or 0} for every thread of pid."""
    tracers = {}
    for tid in task_ids(pid):
        st = proc_status(pid, tid)
        if st is not None:
            tracers[tid] = tracer_process(int(st.get("TracerPid", "0")))
    return tracers


def task_states(pid):
    """{tid: one-letter state} for every thread of pid."""
    states = {}
    for tid in task_ids(pid):
        st = proc_status(pid, tid)
        if st is not None:
            states[tid] = st.get("State", "?")[:1]
    return states


# x86_64 system calls time.sleep() parks in: select, nanosleep, pselect6,
# clock_nanosleep (3.6 - 3.10 use pselect6, 3.11+ clock_nanosleep).
SLEEP_SYSCALLS = (23, 35, 270, 230)


def wait_main_thread_sleeping(pid, timeout=5.0):
    """Wait until pid's main thread sits in a sleep system call.

    A target writes its ready file just before it parks its main thread;
    a dump in between would catch the main thread still running (and
    perhaps holding the GIL).
    """
    if os.uname().machine != "x86_64":
        time.sleep(0.3)
        return

    def sleeping():
        try:
            with open("/proc/%d/task/%d/syscall" % (pid, pid)) as f:
                nr = f.read().split()[0]
        except (OSError, IndexError):
            return False
        return nr.isdigit() and int(nr) in SLEEP_SYSCALLS

    assert wait_until(sleeping, timeout), \
        "main thread of %d never parked in a sleep" % pid


def process_state(pid):
    st = proc_status(pid)
    return None if st is None else st.get("State", "?")[:1]


class Target(object):
    """A started target process and what it reported when ready."""

    def __init__(self, proc, script, interp, ready, workdir, stderr_path):
        self.proc = proc
        self.pid = proc.pid
        self.script = script
        self.interp = interp
        self.ready = ready
        self.workdir = workdir
        self.stderr_path = stderr_path

    def stderr(self):
        try:
            with open(self.stderr_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class ProcessKeeper(object):
    """Starts processes and always kills them at teardown, tools first."""

    def __init__(self, tmpdir_factory):
        self._mktemp = tmpdir_factory
        self.tools = []      # coroscope processes (may be tracing targets)
        self.others = []     # targets and helper processes

    def start_target(self, interp, script_name, *args, **kw):
        """Run script_name under interp; return once it wrote its ready file.

        The ready file path is the script's first argument, args follow.
        With parked_main=True also wait until the main thread sleeps.
        """
        parked_main = kw.pop("parked_main", False)
        path = interp.path if hasattr(interp, "path") else interp
        script = target_script(script_name)
        workdir = str(self._mktemp("target"))
        ready = os.path.join(workdir, "ready.json")
        argv = [path, script, ready]
        argv += [a.format(workdir=workdir) for a in args]
        target = self.start_with_ready(argv, ready, script=script,
                                       interp=interp, workdir=workdir, **kw)
        if parked_main:
            wait_main_thread_sleeping(target.pid)
        return target

    def start_with_ready(self, argv, ready, script=None, interp=None,
                         workdir=None, timeout=READY_TIMEOUT, parse=True):
        if workdir is None:
            workdir = os.path.dirname(ready)
        stderr_path = os.path.join(workdir, "stderr.txt")
        with open(stderr_path, "w") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                    stdout=err, stderr=err, cwd=workdir)
        self.others.append(proc)
        deadline = time.monotonic() + timeout
        while not os.path.exists(ready):
            if proc.poll() is not None:
                with open(stderr_path, errors="replace") as f:
                    pytest.fail("target %r exited with %s before it was "
                                "ready; stderr:\n%s"
                                % (argv, proc.returncode, f.read()))
            if time.monotonic() > deadline:
                with open(stderr_path, errors="replace") as f:
                    pytest.fail("target %r not ready after %.0f s; "
                                "stderr:\n%s" % (argv, timeout, f.read()))
            time.sleep(0.02)
        data = None
        if parse:
            with open(ready) as f:
                data = json.load(f)
        return Target(proc, script, interp, data, workdir, stderr_path)

    def spawn(self, argv, **kw):
        """Start any helper process; it is killed at teardown."""
        kw.setdefault("stdin", subprocess.DEVNULL)
        kw.setdefault("stdout", subprocess.DEVNULL)
        kw.setdefault("stderr", subprocess.DEVNULL)
        proc = subprocess.Popen(argv, **kw)
        self.others.append(proc)
        return proc

    def spawn_coroscope(self, args, env=None):
        """Start coroscope in the background (output in pipes)."""
        proc = subprocess.Popen([COROSCOPE] + list(args),
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                env=coroscope_env(env),
                                universal_newlines=True)
        self.tools.append(proc)
        return proc

    def cleanup(self):
        # Tools first: a tracer that stays alive could keep a killed
        # target from being reported to us, its real parent.
        for proc in self.tools + self.others:
            if proc.poll() is None:
                try:
                    proc.kill()
                except OSError:
                    pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
        self.tools, self.others = [], []


@pytest.fixture
def keeper(tmp_path_factory):
    k = ProcessKeeper(tmp_path_factory.mktemp)
    yield k
    k.cleanup()


@pytest.fixture(scope="module")
def module_keeper(tmp_path_factory):
    k = ProcessKeeper(tmp_path_factory.mktemp)
    yield k
    k.cleanup()


# ---------------------------------------------------------------------------
# Running coroscope

def coroscope_env(extra=None):
    env = dict(os.environ)
    env.pop("COROSCOPE_TEST_HOLD_MS", None)
    env.setdefault("LC_ALL", "C.UTF-8")
    if extra:
        env.update(extra)
    return env


class Result(object):
    def __init__(self, argv, returncode, stdout, stderr):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self):
        return ("coroscope %s -> exit %s\n--- stdout ---\n%s\n"
                "--- stderr ---\n%s" % (" ".join(self.argv[1:]),
                                        self.returncode, self.stdout[:6000],
                                        self.stderr[:6000]))

    def json(self):
        assert self.returncode == 0, "coroscope failed: %r" % self
        try:
            return json.loads(self.stdout)
        except ValueError as e:
            pytest.fail("stdout is not one JSON document (%s): %r" % (e, self))


def assert_no_sanitizer_report(text, context=""):
    for sign in SANITIZER_SIGNS:
        assert sign not in text, "sanitizer report %s:\n%s" % (context, text)


# How long each thread had been off its CPU (attach/offcpu.c): a reading
# of the moment, new in every live dump, null in a core.
OFF_CPU_MARK = re.compile(
    r"^(Thread \d+[^\n]*?) \((?:last ran \d+\.\ds ago|running)\)", re.M)


# A thread's members that move with the moment of the reading.
THREAD_MOMENT = ("off_cpu_s", "wakes_in_s", "times_out_in_s")


def without_moment(doc):
    """A copy of a dump's document less what differs from one reading to
    the next: its stats, each thread's off_cpu_s, wakes_in_s and
    times_out_in_s, and each task's wakes_in_s and times_out_in_s (its
    sleep_until and timeout_at, in the loop's clock, stay)."""
    doc = dict(doc)
    doc.pop("stats", None)
    if "threads" in doc:
        doc["threads"] = [dict((k, v) for k, v in t.items()
                               if k not in THREAD_MOMENT)
                          for t in doc["threads"]]
    if "tasks" in doc:
        doc["tasks"] = [_without_wakes_in(t) for t in doc["tasks"]]
    return doc


def _without_wakes_in(task):
    waits = task.get("awaiting")
    if not isinstance(waits, dict) or not ("wakes_in_s" in waits or
                                           "times_out_in_s" in waits):
        return task
    task = dict(task)
    task["awaiting"] = dict((k, v) for k, v in waits.items()
                            if k not in ("wakes_in_s", "times_out_in_s"))
    return task


# ", sleeps in asyncio.sleep, wakes in 598.1s" (trio.sleep) and the like: when from the
# read (or, in a core, the loop's own time) follows the phrase; and
# ", times out in 898.1s" (", timeout overdue by 1.0s", ...) ends it.
SLEEP_TIME = re.compile(r"^(.*, sleeps? in (?:asyncio|trio)\.sleep)"
                        r"(?:,| until) .*$", re.M)
TIMEOUT_TIME = re.compile(r"^(.*?), (?:times? out|timeouts?) .*$", re.M)


# " (sleeps, wakes in 598.9s)", " (times out in 698.9s)" of a thread
DEADLINE_MARK = re.compile(
    r"^(Thread \d+[^\n]*?) \((?:sleeps, wakes|times out) in \d+\.\ds\)",
    re.M)


def without_off_cpu_marks(text):
    """A text dump less its threads' "(last ran 1.2s ago)" and
    "(running)" marks, and when their sleeps and timed waits end."""
    return DEADLINE_MARK.sub(r"\1", OFF_CPU_MARK.sub(r"\1", text))


def without_moment_marks(text):
    """A text dump less what moves with the moment of its reading: its
    threads' off-CPU marks and when its sleeping tasks wake (which a core
    says in the loop's own clock)."""
    text = SLEEP_TIME.sub(r"\1", without_off_cpu_marks(text))
    return TIMEOUT_TIME.sub(r"\1", text)


def run_coroscope(*args, **kw):
    """Run coroscope with args; returns a Result, fails the test on a hang.

    Keywords: timeout (seconds), env (extra environment), user (run under
    this uid via setpriv), cwd.
    """
    timeout = kw.pop("timeout", COROSCOPE_TIMEOUT) * TIME_SCALE
    env = coroscope_env(kw.pop("env", None))
    user = kw.pop("user", None)
    cwd = kw.pop("cwd", None)
    assert not kw, "unknown keywords %r" % kw
    argv = [COROSCOPE] + [str(a) for a in args]
    if not os.access(COROSCOPE, os.X_OK):
        pytest.fail("coroscope binary %s is missing (set COROSCOPE)"
                    % COROSCOPE)
    full = argv
    if user is not None:
        full = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                "--clear-groups", "--"] + argv
    try:
        out = subprocess.run(full, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=cwd, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("coroscope %s hung: no exit after %.0f s; stderr: %r"
                    % (" ".join(argv[1:]), timeout, e.stderr))
    result = Result(argv, out.returncode,
                    out.stdout.decode("utf-8", "replace"),
                    out.stderr.decode("utf-8", "replace"))
    assert_no_sanitizer_report(result.stderr, "from %r" % argv)
    return result


def assert_one_error_line(result, code, *needles):
    """Exit status code and exactly one 'coroscope: ' line on stderr."""
    assert result.returncode == code, \
        "expected exit %d: %r" % (code, result)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and result.stderr.endswith("\n"), \
        "expected exactly one line on stderr: %r" % result
    assert lines[0].startswith("coroscope: "), \
        "error must start with 'coroscope: ': %r" % result
    for needle in needles:
        assert needle in lines[0], \
            "error message lacks %r: %r" % (needle, result)
    return lines[0]
