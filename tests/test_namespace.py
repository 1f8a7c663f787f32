"""The target's files as the target sees them, not as this host does.

A process in another mount namespace maps a libpython that exists only
inside that namespace, and a process whose libpython was deleted after
loading maps a file that exists nowhere: coroscope must read both
through /proc/PID/root and /proc/PID/map_files, and still name the
parked line.
"""
import glob
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import (run_coroscope, target_script, marker_line, wait_until,
                      _pyenv_root)

SCRIPT = target_script("ns_target.py")


def pyenv_with_libpython(minor):
    root = _pyenv_root()
    for prefix in sorted(glob.glob(os.path.join(root, "versions",
                                                "3.%d.*" % minor))):
        exe = os.path.join(prefix, "bin", "python3.%d" % minor)
        libs = glob.glob(os.path.join(prefix, "lib",
                                      "libpython3.%d*.so.1.0" % minor))
        if os.access(exe, os.X_OK) and libs:
            return exe, libs[0]
    return None, None


def start(argv, ready, env=None):
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not wait_until(lambda: os.path.exists(ready) or proc.poll() is not None,
                      20):
        proc.kill()
        pytest.fail("target did not start")
    if proc.poll() is not None:
        pytest.fail("target died: %s" % proc.stderr.read().decode())
    return proc


def check_parked(proc, ready):
    pid = int(open(ready).read())
    res = run_coroscope("dump", "--json", pid)
    assert res.returncode == 0, res
    doc = res.json()
    frames = [f for t in doc["threads"] for f in t["frames"]]
    assert any(f["file"].endswith("ns_target.py") and
               f["line"] == marker_line(SCRIPT, "ns-park") for f in frames), \
        res.stdout


def test_library_only_inside_another_mount_namespace(tmp_path):
    if not shutil.which("unshare"):
        pytest.skip("unshare(1) is not installed")
    exe, lib = pyenv_with_libpython(12)
    if not exe:
        pytest.skip("no pyenv 3.12 with a shared libpython")
    private = tmp_path / "private"
    private.mkdir()
    ready = str(tmp_path / "ready")
    # Inside the new namespace a tmpfs hides the host's (empty) directory
    # and holds the only copy of libpython the target loads.
    shell = ('mount -t tmpfs none "$1" && cp "$2" "$1/" && '
             'LD_LIBRARY_PATH="$1" exec "$3" "$4" "$5"')
    proc = start(["unshare", "--mount", "--propagation", "private", "sh",
                  "-c", shell, "sh", str(private), lib, exe, SCRIPT, ready],
                 ready)
    try:
        maps = open("/proc/%d/maps" % proc.pid).read()
        assert str(private) in maps, "the target did not load the copy"
        assert not os.listdir(str(private)), "the copy leaked to the host"
        check_parked(proc, ready)
    finally:
        proc.kill()
        proc.wait()


def test_library_deleted_after_loading(tmp_path):
    exe, lib = pyenv_with_libpython(11)
    if not exe:
        pytest.skip("no pyenv 3.11 with a shared libpython")
    libdir = tmp_path / "lib"
    libdir.mkdir()
    shutil.copy(lib, str(libdir))
    ready = str(tmp_path / "ready")
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    proc = start([exe, SCRIPT, ready], ready, env=env)
    try:
        shutil.rmtree(str(libdir))
        maps = open("/proc/%d/maps" % proc.pid).read()
        assert "(deleted)" in maps
        check_parked(proc, ready)
    finally:
        proc.kill()
        proc.wait()
