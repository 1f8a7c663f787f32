"""Getting coroscope to where the hangs are (issue 15).

- `make static`: the executable alone, copied into an empty directory
  used as the root of a new mount namespace, dumps a host process.
- `coroscope --version` names the build id the linker wrote.
- Bash completion offers subcommands, options and Python PIDs.
- `make wheel`: fresh venvs of old and new CPythons install it without
  network, `coroscope dump` works from there, `pip uninstall` removes it.
- The pytest plugin in that wheel dumps and fails a hanging test.
- A target in its own PID and mount namespaces, whose interpreter exists
  only inside them, seen from the host.

Each part that cannot be built or set up here is skipped with the reason.
COROSCOPE_STATIC names a prebuilt static binary (default: `make static`).
"""
import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import (REPO_DIR, COROSCOPE, TIME_SCALE, every_status,
                      interpreter, marker_line, target_script, wait_until,
                      assert_no_sanitizer_report)

# These test the static binary and the wheel `make` builds, not the
# $COROSCOPE under test: the sanitizer pass would rebuild and test the
# same artifacts again.
pytestmark = pytest.mark.packaging

MAKE_TIMEOUT = 300
TOOL_TIMEOUT = 60 * TIME_SCALE
NS_SCRIPT = target_script("ns_target.py")


def make(target):
    """Run `make target` in the checkout; (ok, output tail)."""
    return make_args([target])


def make_args(args):
    """One make at a time in the checkout: each xdist worker has these
    session fixtures of its own, and two `make wheel`s at once (each
    emptying the other's staging directory) built a wheel without the
    plugin."""
    if shutil.which("make") is None:
        return False, "make is not installed"
    os.makedirs(os.path.join(REPO_DIR, "build"), exist_ok=True)
    with open(os.path.join(REPO_DIR, "build", ".test-make.lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        try:
            res = subprocess.run(["make", "-s", "-C", REPO_DIR] + list(args),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT,
                                 universal_newlines=True,
                                 timeout=MAKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            return False, "make %s took longer than %ds" % (" ".join(args),
                                                             MAKE_TIMEOUT)
    return res.returncode == 0, res.stdout[-2000:]


@pytest.fixture(scope="session")
def static_bin():
    given = os.environ.get("COROSCOPE_STATIC")
    if given:
        return given
    ok, out = make("static")
    if not ok:
        pytest.skip("make static failed:\n" + out)
    return os.path.join(REPO_DIR, "build", "static", "coroscope")


def build_id_of(path):
    """The NT_GNU_BUILD_ID of an ELF file, as readelf(1) prints it."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=30).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, "no build id note in %s:\n%s" % (path, out)
    return m.group(1)


# ---------------------------------------------------------------------------
# The static executable and --version

def test_static_binary_needs_nothing(static_bin):
    with open(static_bin, "rb") as f:
        head = f.read(4096)
    assert head[:4] == b"\x7fELF"
    out = subprocess.run(["readelf", "-ld", static_bin],
                         stdout=subprocess.PIPE, universal_newlines=True,
                         timeout=30).stdout
    assert "INTERP" not in out, "the static binary asks for a loader"
    assert "NEEDED" not in out, "the static binary needs shared libraries"


@pytest.mark.parametrize("which", ["static", "dynamic"])
def test_version_names_the_build_id(which, static_bin):
    path = static_bin if which == "static" else COROSCOPE
    res = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=30)
    assert res.returncode == 0, res
    lines = res.stdout.splitlines()
    assert re.match(r"^coroscope \d+\.\d+\.\d+$", lines[0]), res.stdout
    linked = "statically" if which == "static" else "dynamically"
    assert lines[1] == "build id %s (%s linked)" % (build_id_of(path),
                                                   linked), res.stdout


def run(argv, timeout=TOOL_TIMEOUT, **kw):
    """Run argv to completion (text output); fail the test on a hang."""
    try:
        res = subprocess.run([str(a) for a in argv],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True,
                             timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        pytest.fail("%r hung: no exit after %.0f s; output %r"
                    % (argv, timeout, e.stdout))
    assert_no_sanitizer_report(res.stderr, "from %r" % argv)
    return res


def start_parked(keeper, python, tmp_path, argv_prefix=()):
    """ns_target.py under python, parked at its marker; its pid."""
    ready = str(tmp_path / "ready")
    keeper.start_with_ready(list(argv_prefix) + [python, NS_SCRIPT, ready],
                            ready, parse=False)
    with open(ready) as f:
        return int(f.read())


def assert_parked_in_dump(res, script=NS_SCRIPT, marker="ns-park"):
    """A JSON dump of ns_target.py shows its main thread at the marker."""
    assert res.returncode == 0, res
    doc = json.loads(res.stdout)
    want = marker_line(script, marker)
    frames = [f for t in doc["threads"] for f in t["frames"]]
    assert any(f["file"].endswith(os.path.basename(script)) and
               f["line"] == want for f in frames), res.stdout
    return doc


# ---------------------------------------------------------------------------
# The wheel

@pytest.fixture(scope="session")
def wheel(static_bin):
    ok, out = make("wheel")
    if not ok:
        pytest.skip("make wheel failed:\n" + out)
    found = glob.glob(os.path.join(REPO_DIR, "dist", "coroscope-*.whl"))
    assert len(found) == 1, found
    return found[0]


def test_wheel_is_named_for_a_static_binary(wheel):
    name = os.path.basename(wheel)
    m = re.match(r"^coroscope-(\d+\.\d+\.\d+)-py3-none-([a-z0-9_.]+)\.whl$",
                 name)
    assert m, name
    version = run([COROSCOPE, "--version"]).stdout.split()[1]
    assert m.group(1) == version
    # The oldest manylinux tag (every pip knows it), honest only because
    # the executable inside asks nothing of the C library.
    assert "manylinux1_x86_64" in m.group(2).split(".")


def base_pip(ident):
    """A pyenv interpreter whose pip can install into another one."""
    interp = interpreter(ident)
    if interp is None:
        pytest.skip("no pyenv %s" % ident)
    res = run([interp.path, "-m", "pip", "--version"])
    m = re.match(r"pip (\d+)\.(\d+)", res.stdout)
    if res.returncode or not m:
        pytest.skip("%s has no pip" % interp.path)
    if (int(m.group(1)), int(m.group(2))) < (22, 3):
        pytest.skip("pip %s of %s lacks --python" % (m.group(0), interp.path))
    return interp.path


def fresh_venv(base, path, system_site=False):
    """A venv without its own pip: ensurepip costs ~30 s per venv on a
    busy machine, and the base's pip run with --python installs into the
    venv exactly as the venv's own pip would (it re-runs itself there)."""
    argv = [base, "-m", "venv", "--without-pip"]
    if system_site:
        argv.append("--system-site-packages")
    res = run(argv + [path])
    assert res.returncode == 0, res
    return os.path.join(path, "bin", "python")


def venv_pip(base, venv_python, *args):
    res = run([base, "-m", "pip", "--python", venv_python,
               "--disable-pip-version-check", "--no-input"] + list(args),
              env=dict(os.environ, PIP_NO_INDEX="1",
                       PIP_CONFIG_FILE=os.devnull), timeout=180 * TIME_SCALE)
    assert res.returncode == 0, res
    return res


def tree(path):
    found = set()
    for root, dirs, files in os.walk(path):
        for name in files:
            found.add(os.path.relpath(os.path.join(root, name), path))
    return found


@pytest.mark.parametrize("ident", ["3.8", "3.13"])
def test_wheel_in_a_fresh_venv(ident, wheel, keeper, tmp_path):
    base = base_pip(ident)
    venv = str(tmp_path / "venv")
    python = fresh_venv(base, venv)
    before = tree(venv)
    venv_pip(base, python, "install", "--no-index", wheel)

    bindir = os.path.join(venv, "bin")
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    assert shutil.which("coroscope", path=env["PATH"]) == \
        os.path.join(bindir, "coroscope")
    version = run(["coroscope", "--version"], env=env)
    assert version.stdout.splitlines()[1].endswith("(statically linked)"), \
        version
    # The plugin is registered for pytest (which this venv lacks).
    probe = run([python, "-c",
                 "from importlib.metadata import entry_points as e; "
                 "eps = e(); eps = eps.select(group='pytest11') "
                 "if hasattr(eps, 'select') else eps['pytest11']; "
                 "print([x.value for x in eps])"])
    assert probe.returncode == 0 and "coroscope_pytest" in probe.stdout, probe

    # coroscope from the venv's PATH dumps the venv's own interpreter.
    pid = start_parked(keeper, python, tmp_path)
    assert_parked_in_dump(run(["coroscope", "dump", "--json", pid], env=env))

    venv_pip(base, python, "uninstall", "-y", "coroscope")
    left = tree(venv) - before
    assert not left, "pip uninstall left %s" % sorted(left)
    assert not os.path.exists(os.path.join(bindir, "coroscope"))


# ---------------------------------------------------------------------------
# The pytest plugin

SUITE = target_script("plugin_suite.py")
DEBIAN_PYTHON = "/usr/bin/python3.11"


@pytest.fixture(scope="module")
def plugin_venv(wheel, tmp_path_factory):
    """A venv of Debian's 3.11 (which has pytest and pytest-asyncio) with
    the wheel installed: pytest loads the plugin from its entry point."""
    probe = run([DEBIAN_PYTHON, "-c", "import pytest, pytest_asyncio"]) \
        if os.access(DEBIAN_PYTHON, os.X_OK) else None
    if probe is None or probe.returncode:
        pytest.skip("%s with pytest and pytest-asyncio is needed"
                    % DEBIAN_PYTHON)
    venv = str(tmp_path_factory.mktemp("plugin") / "venv")
    python = fresh_venv(DEBIAN_PYTHON, venv, system_site=True)
    venv_pip(DEBIAN_PYTHON, python, "install", "--no-index", wheel)
    return python


def run_suite(python, tmp_path, *args, **kw):
    """plugin_suite.py run by pytest in its own directory (no conftest of
    ours); (result, {test name: (outcome, report text)}, seconds)."""
    work = tmp_path / "suite"
    work.mkdir()
    shutil.copy(SUITE, str(work))
    (work / "pytest.ini").write_text("[pytest]\n" + kw.get("ini", ""))
    started = time.monotonic()
    res = run([python, "-m", "pytest", "-p", "no:cacheprovider",
               "--junitxml=report.xml", "plugin_suite.py"] + list(args),
              cwd=str(work), timeout=90 * TIME_SCALE)
    took = time.monotonic() - started
    outcomes = {}
    if os.path.exists(str(work / "report.xml")):
        for case in ET.parse(str(work / "report.xml")).iter("testcase"):
            bad = case.find("failure")
            if bad is None:
                bad = case.find("error")
            outcomes[case.get("name")] = (
                "passed" if bad is None else bad.tag,
                "" if bad is None else (bad.text or ""))
    return res, outcomes, took


# The start of a line in the await tree: indentation and tree lines.
TREE = "[ |`\\-\u2502\u251c\u2514\u2500]*"


def test_plugin_dumps_and_fails_hanging_tests(plugin_venv, tmp_path):
    res, outcomes, took = run_suite(plugin_venv, tmp_path,
                                    "--coroscope-timeout=3")
    assert res.returncode == 1, res
    assert set(outcomes) == {"test_hangs_sync", "test_passes",
                             "test_slow_without_timeout",
                             "test_hangs_async"}, res
    assert outcomes["test_passes"][0] == "passed", res
    assert outcomes["test_slow_without_timeout"][0] == "passed", res
    # Two hangs of 3 s each, two dumps: nowhere near the outer timeout.
    assert took < 45 * TIME_SCALE, "the run took %.0f s" % took

    line = marker_line(SUITE, "sync-hang")
    outcome, text = outcomes["test_hangs_sync"]
    assert outcome == "failure", res
    assert text.startswith("coroscope: plugin_suite.py::test_hangs_sync "
                           "still running after 3s"), text
    assert re.search(r'File ".*plugin_suite\.py", line %d, in '
                     r'test_hangs_sync\n' % line, text), text

    outcome, text = outcomes["test_hangs_async"]
    assert outcome == "failure", res
    assert text.startswith("coroscope: plugin_suite.py::test_hangs_async "
                           "still running after 3s"), text
    # The test's task parked at its await, over the task it awaits.
    # (each frame line may be followed by its source line; tree lines
    # come before the names)
    assert re.search((r"test_hangs_async  \S*plugin_suite\.py:%d\n"
                      r"(?:.*\n)?" + TREE + r"\(T\) stuck-worker .*\n"
                      + TREE + r"stuck_worker  \S*plugin_suite\.py:%d\n")
                     % (marker_line(SUITE, "async-hang"),
                        marker_line(SUITE, "worker-hang")), text), text

    # The dumps also reached the terminal as they were taken.
    assert res.stdout.count("coroscope: plugin_suite.py::test_hangs_") >= 2


def test_plugin_stop_method_from_the_ini_file(plugin_venv, tmp_path):
    res, outcomes, took = run_suite(
        plugin_venv, tmp_path, "--coroscope-timeout-method=stop",
        ini="coroscope_timeout = 3\ncoroscope_args = --locals\n")
    assert outcomes.get("test_hangs_sync", ("",))[0] == "failure", res
    assert "test_passes" not in outcomes, "the run went on: %r" % res
    assert "Interrupted: coroscope: plugin_suite.py::test_hangs_sync " \
           "timed out" in res.stdout, res
    # --locals reached coroscope: the stuck test's local is shown.
    assert re.search(r"line %d, in test_hangs_sync\n(?:.*\n)?"
                     r"\s+never = <(\w+\.)*Event "
                     % marker_line(SUITE, "sync-hang"),
                     outcomes["test_hangs_sync"][1]), outcomes


# ---------------------------------------------------------------------------
# Containers

def need_root_and(*tools):
    if os.geteuid() != 0:
        pytest.skip("needs root (mount and PID namespaces)")
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip("%s is not installed" % tool)


def sidecar(static_bin, tmp_path, pid, *args, **kw):
    """coroscope dump run from a root holding nothing but the static
    binary and /proc, in a mount namespace of its own but the host's PID
    namespace: the shape of `kubectl debug --target` or a sidecar with
    shareProcessNamespace.  prefix: a command between mount and chroot."""
    root = tmp_path / "sidecar-root"
    if not root.exists():
        root.mkdir()
        (root / "proc").mkdir()
        shutil.copy(static_bin, str(root / "coroscope"))
    assert sorted(os.listdir(str(root))) == ["coroscope", "proc"]
    shell = 'mount -t proc proc "$1/proc" && shift && exec "$@"'
    argv = (["unshare", "--mount", "--propagation", "private", "sh", "-c",
             shell, "sh", str(root)] + list(kw.get("prefix", ())) +
            ["chroot", str(root), "/coroscope", "dump"] + list(args) +
            [str(pid)])
    return run(argv)


@pytest.mark.parametrize("ident", ["3.12", "3.11-debian"])
def test_static_binary_alone_in_a_sidecar_root(ident, static_bin, keeper,
                                               tmp_path):
    need_root_and("unshare", "chroot")
    interp = interpreter(ident)
    if interp is None:
        pytest.skip("no %s interpreter" % ident)
    pid = start_parked(keeper, interp.path, tmp_path)
    doc = assert_parked_in_dump(sidecar(static_bin, tmp_path, pid,
                                        "--json"))
    assert doc["pid"] == pid
    assert doc["python"]["version"] == interp.version


def test_sidecar_without_sys_ptrace_names_the_fix(static_bin, keeper,
                                                  tmp_path):
    """A sidecar running as root without CAP_SYS_PTRACE cannot read a
    target of another user; the error says which capability to add."""
    need_root_and("unshare", "chroot", "setpriv")
    nobody = 65534
    # Somewhere user nobody can read the script and write its ready file.
    shared = tempfile.mkdtemp(prefix="coroscope-sidecar-")
    try:
        os.chmod(shared, 0o777)
        script = shutil.copy(NS_SCRIPT, shared)
        os.chmod(script, 0o644)
        ready = os.path.join(shared, "ready")
        keeper.start_with_ready(
            ["setpriv", "--reuid=%d" % nobody, "--regid=%d" % nobody,
             "--clear-groups", "--", DEBIAN_PYTHON, script, ready],
            ready, workdir=str(tmp_path), parse=False)
        with open(ready) as f:
            pid = int(f.read())

        res = sidecar(static_bin, tmp_path, pid,
                      prefix=["setpriv", "--bounding-set=-sys_ptrace",
                              "--inh-caps=-sys_ptrace", "--"])
        assert res.returncode == 4, res
        assert "permission denied" in res.stderr, res
        assert "without CAP_SYS_PTRACE" in res.stderr, res
        assert "--cap-add SYS_PTRACE" in res.stderr, res

        # The same sidecar with the capability reads it.
        assert_parked_in_dump(sidecar(static_bin, tmp_path, pid, "--json"),
                              script=script)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def host_pid_of(inner_pid, ancestor):
    """The host's pid of the descendant of ancestor whose innermost pid is
    inner_pid (NSpid in /proc/PID/status)."""
    for pid, st in every_status():
        ids = [int(x) for x in st.get("NSpid", "").split()]
        if len(ids) > 1 and ids[-1] == inner_pid:
            chain = pid
            for _ in range(16):      # its parents up to the unshare
                with open("/proc/%d/stat" % chain) as f:
                    chain = int(f.read().rsplit(")", 1)[1].split()[1])
                if chain == ancestor:
                    return pid
                if chain <= 1:
                    break
    return None


def test_host_into_pid_and_mount_namespaces(keeper, tmp_path):
    """The target is pid 1 of its own PID namespace and runs an
    interpreter that exists only in its own mount namespace: coroscope on
    the host reads it by its host pid, the files through /proc/PID/root."""
    need_root_and("unshare")
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        pytest.skip("%s is not installed" % DEBIAN_PYTHON)
    private = tmp_path / "private"
    private.mkdir()
    ready = str(tmp_path / "ready")
    # Inside: a tmpfs over an empty host directory holds the only copy of
    # the interpreter (Debian's: libpython linked in, so one file).
    shell = ('mount -t tmpfs none "$1" && cp "$2" "$1/python-in-ns" && '
             'exec "$1/python-in-ns" "$3" "$4"')
    unshare = keeper.spawn(["unshare", "--pid", "--mount", "--fork",
                            "--mount-proc", "--kill-child", "sh", "-c",
                            shell, "sh", str(private), DEBIAN_PYTHON,
                            NS_SCRIPT, ready], stderr=subprocess.PIPE)
    if not wait_until(lambda: os.path.exists(ready) or
                      unshare.poll() is not None, 20):
        pytest.fail("the namespaced target did not start")
    assert unshare.poll() is None, unshare.stderr.read()
    with open(ready) as f:
        inner = int(f.read())
    assert inner == 1, "the target is not its namespace's init"
    pid = host_pid_of(inner, unshare.pid)
    assert pid, "no host pid for the namespaced target"
    exe = os.path.join(str(private), "python-in-ns")
    assert not os.path.exists(exe), "the interpreter leaked to the host"
    assert os.readlink("/proc/%d/exe" % pid) == exe

    res = run([COROSCOPE, "dump", "--json", pid])
    doc = assert_parked_in_dump(res)
    assert doc["pid"] == pid
    assert doc["python"]["executable"] == exe


# ---------------------------------------------------------------------------
# Bash completion

COMPLETION = os.path.join(REPO_DIR, "completion", "coroscope.bash")


def complete(*words):
    """What bash offers for `coroscope WORDS...` (the last word is the one
    being completed), with our completion script alone."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = ('source "$1"; shift; COMP_WORDS=(coroscope "$@"); '
              'COMP_CWORD=$#; _coroscope; printf "%s\\n" "${COMPREPLY[@]}"')
    res = run(["bash", "--norc", "-c", script, "bash", COMPLETION] +
              list(words))
    assert res.returncode == 0 and not res.stderr, res
    return [w for w in res.stdout.splitlines() if w]


def usage_options():
    """{command: set of long options} from the synopsis of --help."""
    text = run([COROSCOPE, "--help"]).stdout
    words = text.split("\n\n", 1)[0].split()
    options, cmd = {}, None
    for i, word in enumerate(words):
        if word == "coroscope" and i + 1 < len(words):
            nxt = words[i + 1]
            cmd = None if nxt.startswith("-") else nxt
            if cmd:
                options.setdefault(cmd, set())
        m = re.match(r"^\[?(--[a-z][a-z-]*)", word)
        if m and cmd:
            options[cmd].add(m.group(1))
    return options


def test_completion_of_subcommands_and_their_options():
    assert sorted(complete("")) == ["core", "dump", "help", "run", "watch"]
    assert complete("co") == ["core"]
    assert set(complete("--")) == {"--help", "--version"}
    usage = usage_options()
    assert set(usage) == {"dump", "run", "core", "watch"}, usage
    for cmd, wanted in usage.items():
        offered = set(complete(cmd, "--"))
        assert wanted <= offered, (cmd, wanted - offered)
    assert complete("dump", "--format", "") == ["text", "json", "dot"]
    assert complete("core", "--format", "d") == ["dot"]
    assert "--" in complete("run", "-")
    assert complete("watch", "--interval", "0.") == ["0.5s"]


def test_completion_of_files_and_commands(tmp_path):
    core = tmp_path / "core.4242"
    core.write_text("")
    assert complete("core", str(tmp_path / "core.4")) == [str(core)]
    image = tmp_path / "image"
    image.mkdir()
    assert complete("core", "--sysroot", str(tmp_path / "i")) == [str(image)]
    assert complete("run", "--report", str(tmp_path / "co")) == [str(core)]
    # After `--`, the command to run, from PATH.
    assert "unshare" in complete("run", "--timeout", "5m", "--", "unsha")


def test_completion_offers_python_pids(keeper, tmp_path):
    interp = interpreter("3.12") or interpreter("3.11-debian")
    if interp is None:
        pytest.skip("no Python to run as a target")
    pid = start_parked(keeper, interp.path, tmp_path)
    other = keeper.spawn(["sleep", "60"])
    offered = complete("dump", "")
    assert str(pid) in offered
    assert str(other.pid) not in offered
    assert all(w.isdigit() for w in offered), offered
    assert str(pid) in complete("dump", "--locals", str(pid)[:-1])


def test_make_install_puts_completion_with_the_man_page(tmp_path):
    ok, out = make_args(["install", "DESTDIR=%s" % tmp_path, "PREFIX=/usr"])
    assert ok, out
    share = tmp_path / "usr" / "share"
    assert (share / "man" / "man1" / "coroscope.1").is_file()
    installed = share / "bash-completion" / "completions" / "coroscope"
    with open(COMPLETION) as a, open(str(installed)) as b:
        assert a.read() == b.read()
