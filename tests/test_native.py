"""--native and --native-all: C frames from libunwind and libdw, checked
against gdb's own backtrace of the same process.

The target (targets/native_target.py) parks one thread in each of
time.sleep(), lock.acquire(), a ctypes call to libc's pause() and
os.read() on an empty pipe, and its main thread in an asyncio selector;
it records sys._current_frames() from inside.  For every thread:

  * --native-all's native frames carry the names gdb gives (`thread apply
    all bt`, in the same order), except frames gdb cannot name;
  * --native's Python frames are the interpreter's own, and the C
    function that blocks sits inside the innermost Python frame;
  * a thread that never ran Python is shown with its native frames,
    through the signal handler it sits in;
  * the same from a gcore core of the process, and from a kernel core
    (os.abort()) with and without --sysroot, checked against gdb on the
    core.

targets/native_ext_target.py blocks in libraries built here: C++
(names demangled) and C with call-frame information in .debug_frame
only (unwound through it); both checked against gdb too.
"""

import json
import os
import re
import resource
import shutil
import subprocess
import time

import pytest

from conftest import (COROSCOPE, COROSCOPE_TIMEOUT, TIME_SCALE,
                      control_interpreter, coroscope_env, marker_line,
                      run_coroscope,
                      target_script, task_states, wait_until)
from test_core import kernel_core_pattern

SCRIPT = target_script("native_target.py")
GDB = shutil.which("gdb")
GCORE = shutil.which("gcore")

pytestmark = pytest.mark.skipif(
    GDB is None, reason="gdb is the oracle and is not installed "
    "(make deps installs it)")

PY_ROLES = ("sleep", "lock", "pause", "read", "main")
# "cthread" never ran Python and sits in a C signal handler.
ROLES = PY_ROLES + ("cthread",)

# What each thread is blocked in, and C functions of which at least one
# must be named inside its innermost Python frame (libc's are named on
# every build; the interpreter's own only where its symbols say so).
EXPECT = {
    "sleep": ("sleep", {"clock_nanosleep", "nanosleep", "select",
                        "time_sleep", "pysleep"}),
    "lock": ("lock", {"PyThread_acquire_lock_timed", "sem_clockwait",
                      "sem_timedwait", "sem_wait", "do_futex_wait",
                      "PyMutex_LockTimed", "PySemaphore_Wait"}),
    "pause": ("wait", {"pause"}),
    "read": ("io", {"read", "_Py_read"}),
    "main": ("io", {"epoll_wait"}),
}


def base_name(name):
    """glibc's aliases of one function: "__GI___libc_read" -> "read";
    a C++ function without its parameters, which gdb leaves out where
    debug information names the function: "ns::C::f(int)" -> "ns::C::f"."""
    if name is None:
        return None
    name = re.sub(r"(?<=\w)\(.*\)( const)?$", "", name)
    while True:
        name = name.lstrip("_")
        if name.startswith("GI_"):
            name = name[3:]
        elif name.startswith("libc_"):
            name = name[5:]
        else:
            return name


@pytest.fixture(scope="module")
def target(interp, module_keeper):
    t = module_keeper.start_target(interp, "native_target.py")
    # The reporter thread exits after writing the ready file; then every
    # thread must be asleep in its system call.
    def parked():
        states = task_states(t.pid)
        return len(states) == len(ROLES) and \
            all(s == "S" for s in states.values())
    assert wait_until(parked, 10), task_states(t.pid)
    time.sleep(0.2)
    yield t
    t.proc.kill()
    t.proc.wait()


def roles(target):
    """{role: (tid, recorded Python frames innermost first)}."""
    return dict((role, (rec["tid"], rec["frames"]))
                for role, rec in target.ready["threads"].items())


# gdb's view through its Python API, so that frame kinds are known:
# gdb adds frames for tail calls from DWARF call-site information; they
# are not on the stack and no unwinder can see them, so they are left
# out of the comparison (and said so in the test's message).
GDB_SCRIPT = r"""
import gdb
for th in gdb.selected_inferior().threads():
    th.switch()
    print("@T %d" % th.ptid[1])
    f = gdb.newest_frame()
    n = 0
    while f is not None and n < 300:
        print("@F %d %s" % (f.type(), f.name()))
        try:
            f = f.older()
        except gdb.error:
            break
        n += 1
"""


def gdb_stacks(pid, workdir):
    """{tid: [function name or None, innermost first]} from gdb."""
    script = os.path.join(str(workdir), "frames.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)
    # past main and the entry point: unwinders go on to _start
    out = subprocess.run([GDB, "-nx", "-batch", "-p", str(pid),
                          "-ex", "set backtrace past-main on",
                          "-ex", "set backtrace past-entry on",
                          "-ex", "source %s" % script],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120,
                         universal_newlines=True)
    return parse_gdb(out.stdout)


def parse_gdb(text):
    kinds = gdb_frame_kinds()
    stacks, cur = {}, None
    for line in text.splitlines():
        if line.startswith("@T "):
            cur = stacks.setdefault(int(line.split()[1]), [])
        elif line.startswith("@F ") and cur is not None:
            _, kind, name = line.split(" ", 2)
            kind = int(kind)
            if kind == kinds["TAILCALL_FRAME"]:
                continue
            if kind == kinds["SIGTRAMP_FRAME"]:
                name = "<signal handler called>"
            cur.append(None if name == "None" else name)
    assert stacks, "gdb printed no threads:\n%s" % text
    return stacks


_KINDS = {}


def gdb_frame_kinds():
    """gdb.TAILCALL_FRAME and friends, asked of gdb once."""
    if not _KINDS:
        out = subprocess.run(
            [GDB, "-nx", "-batch", "-ex",
             "python print(gdb.TAILCALL_FRAME, gdb.SIGTRAMP_FRAME)"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, timeout=60, universal_newlines=True)
        tail, sig = out.stdout.split()[-2:]
        _KINDS.update(TAILCALL_FRAME=int(tail), SIGTRAMP_FRAME=int(sig))
    return _KINDS


@pytest.fixture(scope="module")
def gdb_view(target):
    return gdb_stacks(target.pid, target.workdir)


@pytest.fixture(scope="module")
def native_all(target, gdb_view):
    return run_coroscope("dump", "--native-all", "--json", target.pid).json()


@pytest.fixture(scope="module")
def native(target, gdb_view):
    return run_coroscope("dump", "--native", "--json", target.pid).json()


def thread_by_tid(doc, tid):
    for t in doc["threads"]:
        if t["tid"] == tid:
            return t
    pytest.fail("thread %d missing from %r" % (tid, [t["tid"] for t in
                                                   doc["threads"]]))


def native_names(thread):
    names = []
    for f in thread["frames"]:
        if f["kind"] != "native":
            continue
        names.append("<signal handler called>" if f.get("signal_frame")
                     else f["function"])
    return names


def compare_with_gdb(ours, gdbs, what):
    assert len(ours) == len(gdbs), \
        "%s: %d native frames, gdb has %d:\n ours %r\n gdb  %r" % (
            what, len(ours), len(gdbs), ours, gdbs)
    for i, (a, b) in enumerate(zip(ours, gdbs)):
        if b is None:          # gdb cannot name it: anything goes
            continue
        if b == "<signal handler called>":
            continue
        assert base_name(a) == base_name(b), \
            "%s: frame %d is %r, gdb says %r:\n ours %r\n gdb  %r" % (
                what, i, a, b, ours, gdbs)


@pytest.mark.parametrize("role", ROLES)
def test_native_all_matches_gdb(target, gdb_view, native_all, role):
    tid, _ = roles(target)[role]
    compare_with_gdb(native_names(thread_by_tid(native_all, tid)),
                     gdb_view[tid], "thread %d (%s)" % (tid, role))


def test_native_all_json_fields(target, native_all):
    seen = 0
    for t in native_all["threads"]:
        for f in t["frames"]:
            if f["kind"] != "native":
                continue
            seen += 1
            assert re.match(r"^0x[0-9a-f]+$", f["address"]), f
            assert f["library"] is None or f["library"].startswith("/") \
                or f["library"] == "[vdso]", f
            if f["library"]:
                assert re.match(r"^0x[0-9a-f]+$", f["offset"]), f
            if "inlined" in f:
                assert f["inlined"] is True, f
    assert seen


@pytest.mark.parametrize("role", PY_ROLES)
def test_native_merges_python_frames(target, native, role):
    tid, recorded = roles(target)[role]
    t = thread_by_tid(native, tid)
    frames = t["frames"]
    py = [(f["function"], f["line"]) for f in frames
          if f["kind"] != "native"]
    assert py == [(f["function"], f["line"]) for f in recorded], \
        "Python frames of %s: %r" % (role, frames)
    mark = "selector" if role == "main" else role
    assert recorded[0]["line"] == marker_line(SCRIPT, mark) or role == "main"
    # The blocking C call is inside (before, innermost first) the
    # innermost Python frame, and no eval-loop frame is left.
    first_py = next(i for i, f in enumerate(frames) if f["kind"] != "native")
    inner = set(base_name(f["function"]) for f in frames[:first_py])
    blocked, names = EXPECT[role]
    assert inner & names, "%s: %r inside %s" % (role, frames[:first_py],
                                                 frames[first_py])
    assert not [f for f in frames if f["kind"] == "native" and
                f["function"] == "_PyEval_EvalFrameDefault"], frames
    assert t["blocked_in"] == blocked, (role, t["blocked_in"], frames)


def test_native_text(target, native):
    out = run_coroscope("dump", "--native", target.pid)
    assert out.returncode == 0, out
    tid, _ = roles(target)["sleep"]
    header = [l for l in out.stdout.splitlines()
              if l.startswith("Thread %d " % tid)]
    assert header and header[0].endswith("[blocked in: sleep]"), out
    assert re.search(r"^  \(C\) \S+", out.stdout, re.M), out
    # Python lines stay as they were
    assert 'line %d, in sleeper' % marker_line(SCRIPT, "sleep") in out.stdout


def test_without_native_nothing_changes(target):
    doc = run_coroscope("dump", "--json", target.pid).json()
    for t in doc["threads"]:
        assert "blocked_in" not in t
        assert all(f["kind"] != "native" for f in t["frames"])


# Where Debian's libunwind8 puts the library ./coroscope loads for
# --native (symbols/unwind_lib.h).
LIBUNWIND = "/lib/x86_64-linux-gnu/libunwind-x86_64.so.8"


def test_executable_does_not_link_libunwind():
    """./coroscope loads libunwind only when --native needs it: linked,
    it and what it loads cost every run half a millisecond."""
    from elftools.elf.elffile import ELFFile
    with open(COROSCOPE, "rb") as f:
        dyn = ELFFile(f).get_section_by_name(".dynamic")
        needed = [t.needed for t in dyn.iter_tags()
                  if t.entry.d_tag == "DT_NEEDED"] if dyn else []
    assert not [n for n in needed if "unwind" in n or "lzma" in n], needed


def test_native_without_libunwind(target):
    """With libunwind unloadable (an empty file bind-mounted over it, in
    a mount namespace of the test's own), --native still dumps the
    Python frames, exit 0, and says once why there are no C frames; the
    plain dump is unchanged."""
    if not os.path.exists(LIBUNWIND):
        pytest.skip("%s is not installed (Debian's libunwind8)" % LIBUNWIND)
    probe = subprocess.run(["unshare", "-m", "true"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if probe.returncode != 0:
        pytest.skip("cannot make a mount namespace here (unshare -m: %s)"
                    % probe.stderr.decode(errors="replace").strip())
    script = ('mount --bind /dev/null "$1" && shift && exec "$@"')
    runs = {}
    for mode in ("--native", "--json"):
        runs[mode] = subprocess.run(
            ["unshare", "-m", "sh", "-c", script, "sh", LIBUNWIND,
             COROSCOPE, "dump", mode, str(target.pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=coroscope_env(None),
            timeout=COROSCOPE_TIMEOUT * TIME_SCALE, text=True)
    out = runs["--native"]
    assert out.returncode == 0, out
    tid, _ = roles(target)["sleep"]
    assert "Thread %d " % tid in out.stdout, out
    assert 'line %d, in sleeper' % marker_line(SCRIPT, "sleep") \
        in out.stdout, out
    assert "(C)" not in out.stdout, out
    warned = [l for l in out.stderr.splitlines()
              if l.startswith("coroscope: warning: native frames not shown: "
                              "cannot load libunwind")]
    assert len(warned) == 1 and "libunwind8" in warned[0], out.stderr
    plain = runs["--json"]
    assert plain.returncode == 0 and plain.stderr == "", plain
    assert len(json.loads(plain.stdout)["threads"]) == len(PY_ROLES)


_MADE_CORES = []


@pytest.fixture(autouse=True)
def remove_cores():
    """gcore's cores take 0.2 to 1.4 GB each, and pytest keeps the
    temporary directories of the last three runs: a few runs of the suite
    filled the disk.  Each test's cores go when it ends."""
    yield
    while _MADE_CORES:
        path = _MADE_CORES.pop()
        if os.path.exists(path):
            os.unlink(path)


def gcore(pid, tmp_path):
    """A core of the running process pid, written by gdb's gcore."""
    prefix = str(tmp_path / "gcore")
    core = "%s.%d" % (prefix, pid)
    _MADE_CORES.append(core)
    out = subprocess.run([GCORE, "-o", prefix, str(pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=180,
                         universal_newlines=True)
    assert out.returncode == 0 and os.path.exists(core), out.stdout
    return core


@pytest.mark.skipif(GCORE is None, reason="gdb's gcore is not installed")
def test_gcore_same_native_frames(target, native_all, tmp_path):
    core = gcore(target.pid, tmp_path)
    doc = run_coroscope("core", "--native-all", "--json", core).json()
    for role in ROLES:
        tid, _ = roles(target)[role]
        live = thread_by_tid(native_all, tid)
        dead = thread_by_tid(doc, tid)
        assert native_names(dead) == native_names(live), role
        assert dead["blocked_in"] == live["blocked_in"], role


def test_thread_without_python(target, native, gdb_view):
    tid, _ = roles(target)["cthread"]
    t = thread_by_tid(native, tid)
    assert t["thread_id"] is None and t["name"] is None, t
    assert t["frames"] and all(f["kind"] == "native" for f in t["frames"])
    sig = [i for i, f in enumerate(t["frames"]) if f.get("signal_frame")]
    assert len(sig) == 1, t["frames"]
    # pause() in the handler, above the trampoline; pause() interrupted
    # below it
    names = [base_name(f["function"]) for f in t["frames"]]
    assert names[0] == "pause" and names[sig[0] + 1] == "pause", names
    assert t["blocked_in"] == "wait", t
    text = run_coroscope("dump", "--native", target.pid).stdout
    assert "Thread %d (no Python thread state) [blocked in: wait]" % tid \
        in text, text
    assert "[signal handler called]" in text, text


def test_unknown_code_is_library_offset(native_all):
    """A frame without a symbol is never given a neighbour's name."""
    for t in native_all["threads"]:
        for f in t["frames"]:
            if f["kind"] == "native" and f["function"] is None:
                assert f["library"] and f["offset"], f


# ---------------------------------------------------------------------------
# A core written by the kernel (os.abort() in the reporter thread)

@pytest.fixture(scope="module")
def kernel_core(interp, module_keeper):
    why = kernel_core_pattern()
    if why:
        pytest.skip(why)
    t = module_keeper.start_target(interp, "native_target.py", "--abort")
    t.proc.wait(timeout=30)
    cores = [os.path.join(t.workdir, n) for n in os.listdir(t.workdir)
             if n.startswith("core")]
    if not cores:
        pytest.skip("no core written (RLIMIT_CORE hard limit %r)"
                    % (resource.getrlimit(resource.RLIMIT_CORE),))
    yield t, cores[0]
    os.unlink(cores[0])


def gdb_core_stacks(executable, core, workdir):
    script = os.path.join(str(workdir), "frames.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)
    out = subprocess.run([GDB, "-nx", "-batch",
                          "-ex", "set backtrace past-main on",
                          "-ex", "set backtrace past-entry on",
                          "-ex", "file %s" % executable,
                          "-ex", "core-file %s" % core,
                          "-ex", "source %s" % script],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120,
                         universal_newlines=True)
    return parse_gdb(out.stdout)


@pytest.mark.parametrize("sysroot", [False, True], ids=["plain", "sysroot"])
def test_kernel_core_matches_gdb(kernel_core, tmp_path, sysroot):
    target, core = kernel_core
    args = ["core", "--native-all", "--json"]
    if sysroot:
        root = tmp_path / "sysroot"
        root.mkdir()
        for top in sorted(os.listdir("/")):
            if top not in ("proc", "sys", "dev"):
                os.symlink("/" + top, str(root / top))
        args += ["--sysroot", str(root)]
    res = run_coroscope(*(args + [core]))
    doc = res.json()
    gdbs = gdb_core_stacks(doc["python"]["executable"] or
                           target.interp.path, core, tmp_path)
    for role in ROLES:
        tid, _ = roles(target)[role]
        compare_with_gdb(native_names(thread_by_tid(doc, tid)), gdbs[tid],
                         "core thread %d (%s)" % (tid, role))
    aborter = thread_by_tid(doc, target.ready["aborter"])
    assert "abort" in [base_name(f.get("function")) for f in
                       aborter["frames"] if f["kind"] == "native"], aborter
    compare_with_gdb(native_names(aborter), gdbs[aborter["tid"]],
                     "aborting thread")


# ---------------------------------------------------------------------------
# The vDSO: a file-less ELF image, read from the target's memory

VDSO_TRIES = 300


def test_vdso_frames(keeper):
    """A stop inside clock_gettime() unwinds out of the vDSO and names it."""
    interp = control_interpreter()
    if interp is None:
        pytest.skip("no Python interpreter found")
    t = keeper.start_target(interp, "vdso_spin.py")
    for _ in range(VDSO_TRIES):
        doc = run_coroscope("dump", "--native-all", "--json", t.pid).json()
        frames = doc["threads"][0]["frames"]
        vdso = [i for i, f in enumerate(frames)
                if f["kind"] == "native" and f["library"] == "[vdso]"]
        if vdso:
            break
    else:
        pytest.fail("no stop out of %d landed in the vDSO" % VDSO_TRIES)
    assert any(frames[i]["function"] for i in vdso), frames[:6]
    # out of the vDSO: libc's clock_gettime, then the time module's, then
    # the Python frame at the marked line
    outer = [base_name(f["function"]) for f in frames[vdso[-1] + 1:]
             if f["kind"] == "native"]
    assert outer and outer[0] == "clock_gettime", frames
    py = [f for f in frames if f["kind"] != "native"]
    assert py[0]["line"] == marker_line(target_script("vdso_spin.py"),
                                        "spin"), py


# ---------------------------------------------------------------------------
# Libraries built here: C++ names, and CFI in .debug_frame only

EXT_SCRIPT = target_script("native_ext_target.py")
TARGETS = os.path.dirname(EXT_SCRIPT)
GXX = shutil.which("g++")
GCC = shutil.which("gcc")


def build(argv):
    out = subprocess.run(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=120, universal_newlines=True)
    assert out.returncode == 0, out.stdout


@pytest.fixture(scope="module")
def ext_target(module_keeper, tmp_path_factory):
    if GXX is None or GCC is None:
        pytest.skip("g++ and gcc build the libraries (make deps installs "
                    "them)")
    interp = control_interpreter()
    if interp is None:
        pytest.skip("no Python interpreter found")
    d = tmp_path_factory.mktemp("ext")
    cxx, df = str(d / "libcsnative_cxx.so"), str(d / "libcsnative_df.so")
    build([GXX, "-shared", "-fPIC", "-g", "-O1", "-o", cxx,
           os.path.join(TARGETS, "native_cxx.cpp")])
    # -fno-asynchronous-unwind-tables with -g: the CFI goes to
    # .debug_frame, none to .eh_frame; -O2 leaves no frame pointer
    build([GCC, "-shared", "-fPIC", "-g", "-O2", "-fomit-frame-pointer",
           "-fno-asynchronous-unwind-tables", "-o", df,
           os.path.join(TARGETS, "native_debug_frame.c")])
    # the same, its .debug_frame moved to a file found by build id
    split, dbg = str(d / "libcsnative_split.so"), str(d / "split.debug")
    build([GCC, "-shared", "-fPIC", "-g", "-O2", "-fomit-frame-pointer",
           "-fno-asynchronous-unwind-tables", "-Wl,--build-id", "-o", split,
           os.path.join(TARGETS, "native_debug_frame.c")])
    build(["objcopy", "--only-keep-debug", split, dbg])
    build(["objcopy", "--strip-debug", split])
    t = module_keeper.start_target(interp, "native_ext_target.py", cxx, df,
                                   split)
    t.libs = {"cxx": cxx, "debug_frame": df, "split": split}
    t.split_debug = dbg
    yield t
    t.proc.kill()
    t.proc.wait()


@pytest.fixture(scope="module")
def ext_views(ext_target):
    gdbs = gdb_stacks(ext_target.pid, ext_target.workdir)
    ours = run_coroscope("dump", "--native-all", "--json",
                         ext_target.pid).json()
    return gdbs, ours


def ext_thread(target, views, role):
    gdbs, ours = views
    rec = target.ready["threads"][role]
    return rec, gdbs[rec["tid"]], thread_by_tid(ours, rec["tid"])


def section_names(path):
    """readelf's table of the sections of path."""
    return subprocess.run(["readelf", "-SW", path], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


def library_frames(thread, lib):
    return [f for f in thread["frames"]
            if f["kind"] == "native" and f["library"] == lib]


def test_cxx_names_demangled(ext_target, ext_views):
    rec, gdbs, t = ext_thread(ext_target, ext_views, "cxx")
    compare_with_gdb(native_names(t), gdbs, "C++ thread %d" % rec["tid"])
    names = [f["function"] for f in
             library_frames(t, ext_target.libs["cxx"])]
    # innermost first: the member functions, then the extern "C" entry
    assert names == ["csns::Waiter::once()", "csns::Waiter::wait(int)",
                     "cs_cxx_block"], t["frames"]
    assert "csns::Waiter::once" in gdbs, gdbs
    # the Python frame that called it comes after (outside) them
    frames = t["frames"]
    last = max(i for i, f in enumerate(frames)
               if f["kind"] == "native" and f["function"] == "cs_cxx_block")
    py = [f for f in frames[last:] if f["kind"] != "native"]
    assert py[0]["function"] == "cxx_caller" and \
        py[0]["line"] == marker_line(EXT_SCRIPT, "cxx"), frames
    text = run_coroscope("dump", "--native", ext_target.pid).stdout
    assert re.search(r"^  \(C\) csns::Waiter::wait\(int\) at \S*"
                     r"native_cxx\.cpp:\d+$", text, re.M), text


def test_debug_frame_only_unwinds(ext_target, ext_views):
    rec, gdbs, t = ext_thread(ext_target, ext_views, "debug_frame")
    df = ext_target.libs["debug_frame"]
    sections = section_names(df)
    assert ".debug_frame" in sections and ".eh_frame_hdr" not in sections, \
        "the library must have its CFI in .debug_frame only:\n" + sections
    compare_with_gdb(native_names(t), gdbs,
                     ".debug_frame thread %d" % rec["tid"])
    names = [f["function"] for f in library_frames(t, df)]
    assert names == ["df_inner", "df_middle", "cs_df_block"], t["frames"]
    # out of the library and on to the interpreter and the Python frame
    py = [f for f in t["frames"] if f["kind"] != "native"]
    assert [(f["function"], f["line"]) for f in py] == \
        [(f["function"], f["line"]) for f in rec["frames"]], t["frames"]


@pytest.mark.skipif(GCORE is None, reason="gdb's gcore is not installed")
def test_ext_from_gcore(ext_target, ext_views, tmp_path):
    """The same frames from a core: .debug_frame comes from the file."""
    core = gcore(ext_target.pid, tmp_path)
    doc = run_coroscope("core", "--native-all", "--json", core).json()
    for role in ("cxx", "debug_frame"):
        _, _, live = ext_thread(ext_target, ext_views, role)
        dead = thread_by_tid(doc, live["tid"])
        assert native_names(dead) == native_names(live), role



def build_id(path):
    """The NT_GNU_BUILD_ID of an ELF file, as hex."""
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, out
    return m.group(1)


def sysroot_with(root, extra):
    """A --sysroot: the machine's files (symlinks) plus extra files,
    {absolute path: file to copy there}."""
    for top in os.listdir("/"):
        if top not in ("proc", "sys", "dev"):
            os.symlink("/" + top, os.path.join(root, top))
    for path, src in extra.items():
        # replace each symlinked directory on the way by a real one
        # holding symlinks to what was in it
        cur = root
        for part in path.strip("/").split("/")[:-1]:
            nxt = os.path.join(cur, part)
            if os.path.islink(nxt):
                real = os.readlink(nxt)
                os.unlink(nxt)
                os.mkdir(nxt)
                if os.path.isdir(real):
                    for name in os.listdir(real):
                        os.symlink(os.path.join(real, name),
                                   os.path.join(nxt, name))
            elif not os.path.exists(nxt):
                os.mkdir(nxt)
            cur = nxt
        shutil.copy(src, os.path.join(root, path.lstrip("/")))


@pytest.mark.skipif(GCORE is None, reason="gdb's gcore is not installed")
def test_debug_frame_from_build_id_file(ext_target, ext_views, tmp_path):
    """A library whose .debug_frame is only in its separate debug file:
    found by build id under the sysroot's /usr/lib/debug/.build-id/."""
    split = ext_target.libs["split"]
    sections = section_names(split)
    assert ".debug_frame" not in sections and \
        ".eh_frame_hdr" not in sections, sections
    core = gcore(ext_target.pid, tmp_path)
    bid = build_id(split)
    root = tmp_path / "sysroot"
    root.mkdir()
    debug = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    rec = ext_target.ready["threads"]["split"]

    def frames(*args):
        doc = run_coroscope("core", "--native-all", "--json",
                            *(args + (core,))).json()
        t = thread_by_tid(doc, rec["tid"])
        return t, [f["function"] for f in library_frames(t, split)]

    # without the debug file the unwind cannot get out of the library
    _, names = frames()
    assert names[:1] == ["df_inner"] and \
        names != ["df_inner", "df_middle", "cs_df_block"], names
    sysroot_with(str(root), {debug: ext_target.split_debug})
    t, names = frames("--sysroot", str(root))
    assert names == ["df_inner", "df_middle", "cs_df_block"], t["frames"]
    py = [f for f in t["frames"] if f["kind"] != "native"]
    assert [(f["function"], f["line"]) for f in py] == \
        [(f["function"], f["line"]) for f in rec["frames"]], t["frames"]


def test_simplequeue_wait_is_a_queue_wait(keeper, interp, tmp_path):
    """A thread in queue.SimpleQueue.get() waits on a lock (a parking
    lot from 3.13) of the queue's own: "[blocked in: queue]", not "lock"
    (nor "futex" from 3.13), where its C function has a name: on every
    build here but Debian's stripped one, whose _queue is unnamed inside
    the executable (there: "lock", as before).  `run` then says "waits
    in queue.SimpleQueue.get (C)" at the caller's line, not "blocked
    acquiring a lock"."""
    if tuple(int(x) for x in interp.version.split(".")[:2]) < (3, 7):
        pytest.skip("queue.SimpleQueue came in 3.7")
    script = target_script("queue_waiter.py")
    target = keeper.start_target(interp, "queue_waiter.py")
    doc = run_coroscope("dump", "--native", "--json", target.pid).json()
    t = [t for t in doc["threads"] if t["tid"] == target.ready["tid"]]
    assert len(t) == 1, doc["threads"]
    stripped = interp.note == "debian, stripped"
    assert t[0]["blocked_in"] == ("lock" if stripped else "queue"), t[0]
    if stripped:
        return
    res = subprocess.run([os.environ.get("COROSCOPE", "coroscope"), "run",
                          "--timeout", "3", "--", interp.path, script,
                          str(tmp_path / "ready2")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=90)
    assert res.returncode == 124, res.stderr[-3000:]
    line = marker_line(script, "simple-get")
    assert re.search(r'^  process \d+: thread \d+ "getter" waits in '
                     r'queue\.SimpleQueue\.get \(C\) \(stuck for at least '
                     r'[0-9.]+s\)\n      called at \S*queue_waiter\.py:%d '
                     r'in getter: q\.get\(\)' % line, res.stderr, re.M), \
        res.stderr[-3000:]
    assert "blocked acquiring a lock" not in res.stderr, res.stderr[-3000:]
