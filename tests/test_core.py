"""`coroscope core`: the same answers from a core file as from the process.

- For each interpreter and each parked target (threads; asyncio tasks and
  generators), `dump --json --locals` of the live process is taken, then a
  gcore of it; `core --json --locals` on the core must give the same
  document except "stats" (and the "core" object only a core has).
- A kernel-written core (os.abort(), a segfault) where core_pattern lets
  a test collect it: signal, thread, fault address and the aborting
  thread's frames; otherwise the test says why it skips.
- --sysroot and --lib-search-path find the files; missing or mismatched
  ones are named in a warning.
- Errors: a truncated core (9), a core of a non-Python process (5), a
  file that is not a core (9), a core whose executable or libpython
  cannot be found or does not match (10); each with exactly one line on
  stderr.

Cores are large (a gcore of a threaded target is hundreds of MB): each
lives in a pytest temporary directory and is deleted as soon as it has
been read.
"""

import os
import re
import resource
import shutil
import struct
import subprocess

import pytest

from conftest import (assert_one_error_line, control_interpreter,
                      marker_line, run_coroscope, target_script,
                      wait_until, without_moment, without_moment_marks)

GCORE = shutil.which("gcore")
needs_gcore = pytest.mark.skipif(GCORE is None,
                                 reason="gdb's gcore is not installed")

# Targets compared document for document: (script, extra arguments).
# A target another change has not added yet is skipped, not failed.
COMPARED_TARGETS = [
    ("threads_target.py", ()),
    ("asyncio_target.py", ()),
]


def take_gcore(pid, directory):
    """Write a core of the running process pid with gdb's gcore."""
    prefix = os.path.join(str(directory), "gcore")
    out = subprocess.run([GCORE, "-o", prefix, str(pid)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=180,
                         universal_newlines=True)
    path = "%s.%d" % (prefix, pid)
    assert out.returncode == 0 and os.path.exists(path), \
        "gcore %d failed (%s):\n%s" % (pid, out.returncode, out.stdout)
    return path


def without(doc, *keys):
    """doc less keys, its stats and each thread's off_cpu_s (how long it
    had been off its CPU: a live reading of the moment, null in a
    core)."""
    doc = without_moment(doc)
    for k in keys:
        doc.pop(k, None)
    return doc


def first_difference(a, b, where="$"):
    """Where two JSON values first differ, for a readable failure."""
    if type(a) is not type(b):
        return "%s: %r vs %r" % (where, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in %s" % (where, k,
                                              "dump" if k in a else "core")
            d = first_difference(a[k], b[k], "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items vs %d" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, "%s[%d]" % (where, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (where, a, b)


def strip_core_header(text):
    """The report part of `core` text output (after its two header lines)."""
    lines = text.splitlines(True)
    assert lines[0].startswith("Core file: "), text[:500]
    assert lines[1].startswith("Process "), text[:500]
    return "".join(lines[2:])


# ---------------------------------------------------------------------------
# gcore of a parked target == the live dump

@needs_gcore
@pytest.mark.parametrize("script,args", COMPARED_TARGETS,
                         ids=[s.split("_")[0] for s, _ in COMPARED_TARGETS])
def test_gcore_matches_dump(interp, keeper, tmp_path, script, args):
    if not os.path.exists(target_script(script)):
        pytest.skip("%s does not exist yet" % script)
    target = keeper.start_target(interp, script, *args, parked_main=True)
    live = run_coroscope("dump", "--json", "--locals", target.pid).json()
    live_text = run_coroscope("dump", "--locals", target.pid)
    core = take_gcore(target.pid, tmp_path)
    try:
        res = run_coroscope("core", "--json", "--locals", core)
        text = run_coroscope("core", "--locals", core)
    finally:
        os.unlink(core)
    doc = res.json()
    assert not res.stderr, res
    # how long each thread was off its CPU: read off a live process
    # only (test_off_cpu.py), null in a core.  A parked thread found on a
    # CPU as it was read (woken for a moment: seen under load in
    # sessions 36 and 39) has none in that dump: three dumps at most.
    for _ in range(2):
        if all(t["off_cpu_s"] is not None for t in live["threads"]):
            break
        live = run_coroscope("dump", "--json", "--locals", target.pid).json()
    assert all(t["off_cpu_s"] is not None for t in live["threads"]), live
    assert all(t["off_cpu_s"] is None for t in doc["threads"]), doc
    diff = first_difference(without(live, "stats"),
                            without(doc, "stats", "core"))
    assert diff is None, "dump and core differ at %s" % diff
    assert doc["stats"]["pause_ms"] == 0

    info = doc["core"]
    assert info["path"] == core
    assert info["written_by"] == "gcore"
    assert info["signal"] is None and info["thread"] is None
    assert info["executable"] == live["python"]["executable"]
    assert info["warnings"] == [] and info["truncated"] is False

    assert text.returncode == 0 and not text.stderr, text
    assert text.stdout.splitlines()[0] == \
        "Core file: %s (written by gcore)" % core
    assert without_moment_marks(strip_core_header(text.stdout)) == \
        without_moment_marks(live_text.stdout)


# ---------------------------------------------------------------------------
# Cores written by the kernel

CRASHER = '''\
import ctypes, os, signal, sys, threading, time

def worker(ev):
    ev.wait()  # MARK: worker-wait

def crash(how):
    if how == "segv":
        ctypes.string_at(0)  # MARK: segv
    os.abort()  # MARK: abort

def main():
    ev = threading.Event()
    t = threading.Thread(target=worker, args=(ev,), name="worker")
    t.daemon = True
    t.start()
    if sys.argv[1] == "alike-abort":
        # alike threads, one of which takes the signal
        ts = [threading.Thread(target=worker, args=(ev,), name="alike")
              for _ in range(4)]
        for a in ts:
            a.daemon = True
            a.start()
        time.sleep(0.3)
        signal.pthread_kill(ts[2].ident, signal.SIGABRT)
        time.sleep(30)
    if sys.argv[1] == "thread-segv":
        c = threading.Thread(target=lambda: (time.sleep(0.3), crash("segv")),
                             name="crasher")
        c.start()
        time.sleep(30)  # MARK: main-sleep
    time.sleep(0.2)
    crash(sys.argv[1])  # MARK: call-crash

main()  # MARK: call-main
'''


def kernel_core_pattern():
    """Why the kernel will not write a core we can find, or None."""
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError as e:
        return "cannot read /proc/sys/kernel/core_pattern: %s" % e
    if pattern.startswith("|"):
        return ("kernel.core_pattern pipes cores to %r (systemd-coredump, "
                "apport...), not to a file this test can find"
                % pattern[1:].split()[0])
    if "/" in pattern:
        return ("kernel.core_pattern is %r: cores go to a fixed "
                "directory, not the crashing process's" % pattern)
    return None


def allow_cores():
    resource.setrlimit(resource.RLIMIT_CORE,
                       (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


@pytest.fixture(scope="module")
def kernel_cores(tmp_path_factory):
    """{"abort": (core path, script, pid), "segv": ...} or a skip."""
    why = kernel_core_pattern()
    if why:
        pytest.skip(why)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        if hard != resource.RLIM_INFINITY:
            pytest.skip("RLIMIT_CORE is capped at %d bytes" % hard)
    except (ValueError, OSError) as e:
        pytest.skip("cannot read RLIMIT_CORE: %s" % e)
    interp = control_interpreter()
    if interp is None:
        pytest.skip("no Python interpreter found")
    made = {}
    for how in ("abort", "segv", "thread-segv", "alike-abort"):
        d = tmp_path_factory.mktemp("kcore-" + how)
        script = os.path.join(str(d), "crasher.py")
        with open(script, "w") as f:
            f.write(CRASHER)
        proc = subprocess.Popen([interp.path, script, how], cwd=str(d),
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                preexec_fn=allow_cores)
        proc.wait(timeout=60)
        cores = [os.path.join(str(d), n) for n in os.listdir(str(d))
                 if n.startswith("core")]
        if not cores:
            pytest.skip("the kernel wrote no core for a process killed by "
                        "signal %d (core_pattern %r)"
                        % (-proc.returncode, open(
                            "/proc/sys/kernel/core_pattern").read().strip()))
        made[how] = (cores[0], script, proc.pid)
    yield made
    for path, _, _ in made.values():
        if os.path.exists(path):
            os.unlink(path)


def frames_of(doc, tid):
    for t in doc["threads"]:
        if t["tid"] == tid:
            return [(fr["function"], fr["line"]) for fr in t["frames"]]
    pytest.fail("no thread %d in %r" % (tid, [t["tid"] for t in doc["threads"]]))


def test_kernel_core_abort(kernel_cores):
    core, script, pid = kernel_cores["abort"]
    doc = run_coroscope("core", "--json", core).json()
    info = doc["core"]
    assert info["written_by"] == "kernel"
    assert info["signal"] == 6 and info["signal_name"] == "SIGABRT"
    assert info["thread"] == pid and doc["pid"] == pid
    assert info["sender_pid"] == pid
    assert info["fault_address"] is None
    # The kernel keeps the first 80 bytes; the full line is read from
    # argv in the saved stack.
    assert doc["command"] == "%s %s abort" % (
        control_interpreter().path, script) or \
        doc["command"].endswith(" %s abort" % script), doc["command"]
    assert doc["command"].startswith(info["command"]), info
    assert frames_of(doc, pid) == [
        ("crash", marker_line(script, "abort")),
        ("main", marker_line(script, "call-crash")),
        ("<module>", marker_line(script, "call-main"))]
    worker = [t for t in doc["threads"] if t["name"] == "worker"]
    assert len(worker) == 1, doc["threads"]
    assert ("worker", marker_line(script, "worker-wait")) in \
        [(f["function"], f["line"]) for f in worker[0]["frames"]]

    text = run_coroscope("core", core)
    assert text.returncode == 0, text
    lines = text.stdout.splitlines()
    assert lines[0] == "Core file: %s (written by the kernel)" % core
    assert lines[1] == ("Process %d killed by signal 6 (SIGABRT) in thread "
                        "%d, raised by the process itself" % (pid, pid))
    assert re.search(r'File "%s", line %d, in crash$'
                     % (re.escape(script), marker_line(script, "abort")),
                     text.stdout, re.M), text
    assert took_signal(text.stdout) == [pid], text.stdout


def took_signal(text):
    """The ids of the threads whose header says they took the core's
    signal (each thread's header; groups of alike threads' too)."""
    return [int(m.group(1)) for m in re.finditer(
        r"^Threads? (\d+)[^\n]*\(took SIG[A-Z]+\)", text, re.M)]


def test_kernel_core_segfault(kernel_cores):
    core, script, pid = kernel_cores["segv"]
    doc = run_coroscope("core", "--json", core).json()
    info = doc["core"]
    assert info["signal"] == 11 and info["signal_name"] == "SIGSEGV"
    assert info["thread"] == pid
    assert info["fault_address"] == "0x0"
    # ctypes' C code faulted under ctypes.string_at, called from crash.
    frames = frames_of(doc, pid)
    assert frames[0][0] == "string_at", frames
    assert frames[1] == ("crash", marker_line(script, "segv")), frames
    text = run_coroscope("core", core)
    assert text.stdout.splitlines()[1] == (
        "Process %d killed by signal 11 (SIGSEGV) in thread %d at address "
        "0x0" % (pid, pid)), text


def test_kernel_core_segfault_in_thread(kernel_cores):
    """The thread that faulted is named, not the main thread."""
    core, script, pid = kernel_cores["thread-segv"]
    doc = run_coroscope("core", "--json", core).json()
    info = doc["core"]
    by_name = dict((t["name"], t) for t in doc["threads"])
    assert info["signal"] == 11 and info["fault_address"] == "0x0"
    assert info["thread"] == by_name["crasher"]["tid"] != pid, info
    assert ("crash", marker_line(script, "segv")) in \
        [(f["function"], f["line"]) for f in by_name["crasher"]["frames"]]
    assert [(f["function"], f["line"])
            for f in by_name["MainThread"]["frames"]] == [
        ("main", marker_line(script, "main-sleep")),
        ("<module>", marker_line(script, "call-main"))]
    text = run_coroscope("core", core).stdout
    assert took_signal(text) == [info["thread"]], text
    assert re.search(r'^Thread %d "crasher" \(took SIGSEGV\)'
                     % info["thread"], text, re.M), text


def test_kernel_core_signal_thread_not_alike(kernel_cores):
    """Four threads wait alike (and the worker with them); one takes
    SIGABRT (pthread_kill): it is shown alone, saying so, and the others
    together."""
    core, script, pid = kernel_cores["alike-abort"]
    doc = run_coroscope("core", "--json", core).json()
    alike = [t["tid"] for t in doc["threads"] if t["name"] == "alike"]
    took = doc["core"]["thread"]
    assert len(alike) == 4 and took in alike, (alike, doc["core"])
    text = run_coroscope("core", core).stdout
    assert took_signal(text) == [took], text
    assert re.search(r'^Thread %d "alike" \(took SIGABRT\)' % took, text,
                     re.M), text
    groups = re.findall(r"^Threads (.*) \((\d+) alike\)$", text, re.M)
    assert len(groups) == 1 and int(groups[0][1]) >= 3, text
    assert str(took) not in re.findall(r"\d+", groups[0][0]), text


def test_kernel_core_truncated(kernel_cores, tmp_path):
    """Memory cut off: the error says the core is truncated."""
    core = kernel_cores["abort"][0]
    cut = str(tmp_path / "cut.core")
    with open(core, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(os.path.getsize(core) * 30 // 100))
    res = run_coroscope("core", "--json", cut)
    os.unlink(cut)  # tens of megabytes that pytest would keep
    if res.returncode == 0:
        # What was read happened to be in the part that is left.
        assert "truncated" in res.stderr, res
    else:
        assert_one_error_line(res, 9, "core file '%s' is truncated" % cut)


def main_stack_offset(path):
    """Where the core file's copy of the main thread's stack begins: the
    highest user-space PT_LOAD with bytes in the file."""
    with open(path, "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    best = None
    for i in range(phnum):
        ptype, _, off, vaddr, _, filesz = struct.unpack_from(
            "<IIQQQQ", table, i * phentsize)
        if ptype == 1 and filesz and vaddr < 1 << 47 and \
                (best is None or vaddr > best[0]):
            best = (vaddr, off)
    return best[1]


def test_kernel_core_cut_at_the_main_stack(kernel_cores, tmp_path):
    """A core cut where the main thread's stack begins: the thread sleeps
    in time.sleep() there.  3.11 and 3.12 find a thread's innermost frame
    through its C stack: its frames are then unknown, which the thread
    must say (truncated, "could not be read"), not "no Python frames".
    Frames that are shown are the whole core's innermost ones; the cut
    is a warning in JSON's core "warnings" as on stderr."""
    core, script, pid = kernel_cores["thread-segv"]
    whole = run_coroscope("core", "--json", core).json()
    cut = str(tmp_path / "cut.core")
    with open(core, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(main_stack_offset(core)))
    res = run_coroscope("core", "--json", cut)
    text = run_coroscope("core", cut)
    os.unlink(cut)
    assert res.returncode == 0, res
    doc = res.json()
    said = "core file '%s' is truncated" % cut
    assert [w for w in doc["core"]["warnings"] if w.startswith(said)], doc
    assert ("coroscope: warning: " + said) in res.stderr, res
    got = [t for t in doc["threads"] if t["tid"] == pid][0]
    full = frames_of(whole, pid)
    assert full, whole["threads"]
    if got["truncated"]:
        assert frames_of(doc, pid) == full[:len(got["frames"])], got
    else:
        assert frames_of(doc, pid) == full, got
    if not got["frames"]:
        block = text.stdout.split('"MainThread"', 1)[1].split("\n\n")[0]
        assert "(its Python frames could not be read)" in block, block
        assert "(no Python frames)" not in block, block


# ---------------------------------------------------------------------------
# Finding files: --sysroot, --lib-search-path, EXECUTABLE

@pytest.fixture(scope="module")
def control_gcore(tmp_path_factory, module_keeper):
    """A gcore of the threads target under one interpreter, and its dump."""
    if GCORE is None:
        pytest.skip("gdb's gcore is not installed")
    interp = control_interpreter()
    if interp is None:
        pytest.skip("no Python interpreter found")
    target = module_keeper.start_target(interp, "threads_target.py",
                                        parked_main=True)
    live = run_coroscope("dump", "--json", target.pid).json()
    core = take_gcore(target.pid, tmp_path_factory.mktemp("gcore"))
    target.proc.kill()
    target.proc.wait()
    yield core, live, interp
    os.unlink(core)


def test_sysroot(control_gcore, tmp_path):
    """Files are opened as SYSROOT + path."""
    core, live, _ = control_gcore
    root = tmp_path / "sysroot"
    root.mkdir()
    for top in sorted(os.listdir("/")):
        if top in ("proc", "sys", "dev", "tmp"):
            continue
        os.symlink("/" + top, str(root / top))
    res = run_coroscope("core", "--json", "--sysroot", str(root), core)
    doc = res.json()
    assert not res.stderr, res
    assert without(doc, "stats", "core") == without(live, "stats")


def test_lib_search_path_and_missing_files(control_gcore, tmp_path):
    """With nothing under the sysroot, the executable named on the command
    line and libpython found by name in --lib-search-path are enough;
    every other missing library is named in a warning."""
    core, live, interp = control_gcore
    exe = live["python"]["executable"]
    libdir = os.path.join(os.path.dirname(os.path.dirname(exe)), "lib")
    if not [n for n in os.listdir(libdir) if n.startswith("libpython")]:
        pytest.skip("%s has no shared libpython" % interp.path)
    res = run_coroscope("core", "--json", "--sysroot", "/nonexistent",
                        "--lib-search-path", "/nonexistent2:" + libdir,
                        core, exe)
    doc = res.json()
    assert without(doc, "stats", "core") == without(live, "stats")
    warnings = [l for l in res.stderr.splitlines()
                if l.startswith("coroscope: warning: ")]
    assert warnings and len(warnings) == len(res.stderr.splitlines()), res
    assert any("libc.so" in w and "cannot find" in w for w in warnings), res
    assert doc["core"]["warnings"] == [
        w[len("coroscope: warning: "):] for w in warnings]
    assert not any("libpython" in w for w in warnings), res


def test_mismatched_library_is_named(control_gcore, tmp_path):
    """A file at the right path with another build id is not used.  A
    libpython that does not match is not "not a Python process" (5):
    the core's files are not here (10), and the error names the file
    and the options that give it."""
    core, live, interp = control_gcore
    exe = live["python"]["executable"]
    libdir = os.path.join(os.path.dirname(os.path.dirname(exe)), "lib")
    libs = [n for n in os.listdir(libdir) if n.startswith("libpython")
            and ".so" in n and not os.path.islink(os.path.join(libdir, n))]
    if not libs:
        pytest.skip("%s has no shared libpython" % interp.path)
    impostor = tmp_path / "lib"
    impostor.mkdir()
    for n in libs:
        shutil.copy("/bin/true", str(impostor / n))
    res = run_coroscope("core", "--sysroot", "/nonexistent",
                        "--lib-search-path", str(impostor), core, exe)
    assert res.returncode == 10, res
    assert any("no copy matches" in l and "libpython" in l and
               "build id" in l for l in res.stderr.splitlines()), res
    last = res.stderr.splitlines()[-1]
    assert last.startswith("coroscope: core '%s'" % core), res
    assert "/libpython" in last and "no copy here matches the core" in \
        last and "--lib-search-path" in last, last
    assert "not of a Python process" not in res.stderr, res
    # and where there is none at all
    res = run_coroscope("core", "--sysroot", "/nonexistent",
                        "--lib-search-path", str(tmp_path), core, exe)
    assert res.returncode == 10, res
    assert "/libpython" in res.stderr.splitlines()[-1] and \
        "not found here" in res.stderr.splitlines()[-1], res


def sysroot_with_libc_of(tmp_path, impostor):
    """A sysroot of this machine's files but the C library, which is a
    copy of IMPOSTOR: the path the core names, another build."""
    libc = os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")
    root = tmp_path / "sysroot"
    at = root
    parts = libc.strip("/").split("/")
    for depth, part in enumerate(parts):
        at.mkdir()
        here = "/" + "/".join(parts[:depth])
        for name in sorted(os.listdir(here)):
            if name == part or (depth == 0 and name in ("proc", "sys",
                                                        "dev")):
                continue
            os.symlink(os.path.join(here, name), str(at / name))
        at = at / part
    shutil.copy(impostor, str(at))
    # Debian's /lib is /usr/lib: the same link, inside the sysroot
    if os.path.islink("/lib") and not (root / "lib").exists():
        os.symlink(os.readlink("/lib").lstrip("/"), str(root / "lib"))
    return root


def test_mismatched_libc_says_no_wait(control_gcore, tmp_path):
    """A C library that is not the core's (another image's, under
    --sysroot) has neither its names nor its unwind tables: each
    thread's native stack stops at its innermost frame, unnamed.  Where
    it waits is then not known: no thread may be said "running" for
    it (each was, as if spinning); the mismatch is named."""
    core = control_gcore[0]
    libm = os.path.realpath("/lib/x86_64-linux-gnu/libm.so.6")
    root = sysroot_with_libc_of(tmp_path, libm)
    right = run_coroscope("core", "--native", "--json", core).json()
    res = run_coroscope("core", "--native", "--json", "--sysroot",
                        str(root), core)
    doc = res.json()
    assert any("no copy matches" in l and "libc.so.6" in l
               for l in res.stderr.splitlines()), res
    said = dict((t["tid"], t["blocked_in"]) for t in right["threads"])
    waits = [t for t in doc["threads"] if said[t["tid"]] != "running"]
    assert waits, said
    for t in waits:
        assert t["blocked_in"] in (None, said[t["tid"]]), (t, said)
    assert any(t["blocked_in"] is None for t in waits), doc["threads"]
    text = run_coroscope("core", "--native", "--sysroot", str(root), core)
    assert "[blocked in: running]" not in text.stdout or \
        "running" in said.values(), text.stdout


def test_executable_argument_missing(control_gcore):
    core = control_gcore[0]
    res = run_coroscope("core", core, "/nonexistent/python")
    assert_one_error_line(res, 10, "cannot find the executable of core",
                          "(looked for '/nonexistent/python')",
                          "the file given is not the one the process ran")


def test_executable_not_under_sysroot(control_gcore):
    core = control_gcore[0]
    res = run_coroscope("core", "--sysroot", "/nonexistent", core)
    assert_one_error_line(res, 10, "cannot find the executable of core",
                          "/nonexistent/", "--sysroot")


def test_executable_argument_mismatched(control_gcore):
    core = control_gcore[0]
    res = run_coroscope("core", core, "/bin/true")
    # (it was given: "pass it as the second argument" said it was not)
    assert_one_error_line(res, 10, "'/bin/true'", "build id",
                          "the file given is not the one the process ran")
    assert "second argument" not in res.stderr, res


# ---------------------------------------------------------------------------
# Errors

def test_truncated_gcore(control_gcore, tmp_path):
    """gdb writes its notes last: cutting the file loses them."""
    core = control_gcore[0]
    cut = str(tmp_path / "cut.core")
    with open(core, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(os.path.getsize(core) * 30 // 100))
    res = run_coroscope("core", cut)
    os.unlink(cut)  # tens of megabytes that pytest would keep
    assert_one_error_line(res, 9, "core file '%s' is truncated" % cut)


def notes_of(data):
    """(offset, namesz, descsz, type, desc offset) of each note of the
    core's PT_NOTE segments (ELF64, little-endian)."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for i in range(phnum):
        ptype, = struct.unpack_from("<I", data, phoff + i * phentsize)
        off, = struct.unpack_from("<Q", data, phoff + i * phentsize + 8)
        size, = struct.unpack_from("<Q", data, phoff + i * phentsize + 32)
        at = off
        while ptype == 4 and at + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, at)
            desc = at + 12 + (namesz + 3) // 4 * 4
            out.append((at, namesz, descsz, ntype, desc))
            at = desc + (descsz + 3) // 4 * 4
    return out


NT_FILE = 0x46494c45


@pytest.mark.parametrize("how", ["first-note-size", "file-page-size"])
def test_malformed_notes_said(control_gcore, tmp_path, how):
    """A note whose sizes run past its segment, or an NT_FILE with no
    page size it could have: exit 9, saying which (both were "lists no
    mapped files", or "not of a Python process" for a page size of 0)."""
    with open(control_gcore[0], "rb") as f:
        data = bytearray(f.read())
    notes = notes_of(data)
    if how == "first-note-size":
        struct.pack_into("<I", data, notes[0][0], 0xffffff00)
        want = "has a malformed note (sizes past its segment's end)"
    else:
        desc = [n[4] for n in notes if n[3] == NT_FILE][0]
        struct.pack_into("<Q", data, desc + 8, 0)
        want = "has a malformed NT_FILE note"
    bad = tmp_path / "bad.core"
    bad.write_bytes(bytes(data))
    res = run_coroscope("core", bad)
    bad.unlink()  # tens of megabytes that pytest would keep
    assert_one_error_line(res, 9, "core file '%s' %s" % (bad, want))


@needs_gcore
def test_core_of_non_python_process(keeper, tmp_path):
    sleeper = keeper.spawn(["sleep", "600"])
    wait_until(lambda: os.path.exists("/proc/%d/exe" % sleeper.pid), 5)
    core = take_gcore(sleeper.pid, tmp_path)
    res = run_coroscope("core", core)
    os.unlink(core)
    assert_one_error_line(res, 5, "core '%s'" % core, "(process %d, sleep)"
                          % sleeper.pid, "not of a Python process")


@pytest.mark.parametrize("path,why", [
    ("/etc/passwd", "is not a core file"),
    ("/bin/true", "is not a core file (it is an ELF"),
    ("/", "is not a core file (it is a directory)"),
    ("/nonexistent/core", "cannot open core file"),
])
def test_not_a_core(path, why):
    res = run_coroscope("core", path)
    assert_one_error_line(res, 9, why)


def test_usage_errors():
    res = run_coroscope("core")
    assert_one_error_line(res, 2, "missing COREFILE")
    res = run_coroscope("core", "a", "b", "c")
    assert_one_error_line(res, 2, "unexpected argument 'c'")
    res = run_coroscope("core", "--no-block", "a")
    assert_one_error_line(res, 2, "unknown option")


def test_fuzz_corpus_is_small():
    """The seed corpus kept in the repository stays small."""
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "fuzz", "corpus", "core")
    sizes = [os.path.getsize(os.path.join(corpus, n))
             for n in os.listdir(corpus)]
    assert sizes, "no seeds in %s" % corpus
    assert max(sizes) < 64 * 1024 and sum(sizes) < 300 * 1024, sizes


def test_fuzz_corpus_seeds_open(tmp_path):
    """The seeds are cores the reader accepts, so fuzzing starts deep."""
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "fuzz", "corpus", "core")
    accepted = 0
    for name in sorted(os.listdir(corpus)):
        res = run_coroscope("core", os.path.join(corpus, name),
                            "/nonexistent")
        assert res.returncode in (5, 9, 10), res
        if res.returncode == 10:
            accepted += 1
    assert accepted, "no seed got past the core reader"
