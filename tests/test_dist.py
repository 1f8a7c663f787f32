"""Getting coroscope to where the hangs are (issue 15).

- `make static`: the executable alone, copied into an empty directory
  used as the root of a new mount namespace, dumps a host process.
- `coroscope --version` names the build id the linker wrote.
- `make wheel`: fresh venvs of old and new CPythons install it without
  network, `coroscope dump` works from there, `pip uninstall` removes it.
- The pytest plugin in that wheel dumps and fails a hanging test.
- A target in its own PID and mount namespaces, whose interpreter exists
  only inside them, seen from the host.

Each part that cannot be built or set up here is skipped with the reason.
COROSCOPE_STATIC names a prebuilt static binary (default: `make static`).
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO_DIR, COROSCOPE

MAKE_TIMEOUT = 300


def make(target):
    """Run `make target` in the checkout; (ok, output tail)."""
    if shutil.which("make") is None:
        return False, "make is not installed"
    try:
        res = subprocess.run(["make", "-s", "-C", REPO_DIR, target],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=MAKE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "make %s took longer than %ds" % (target, MAKE_TIMEOUT)
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
