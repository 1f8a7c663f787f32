"""readers/layouts_generated.c must match what tools/gen-layouts.py derives
from the CPython builds installed here (their DWARF and the interpreters
themselves), including the builds under /opt/python3.14 and
/opt/python3.14t when they exist.  Versions not installed are taken from
the committed file."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "tools", "gen-layouts.py")
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable


# (no coroscope in it: the sanitizer pass would only run it again)
@pytest.mark.slow
def test_generated_layouts_are_current():
    if shutil.which("gdb") is None:
        pytest.skip("gdb is not installed: gen-layouts.py reads DWARF "
                    "through gdb (apt-get install gdb)")
    # The builds from source (DEVELOPERS.md) are read where present.
    prefixes = []
    for d in ("/opt/python3.14", "/opt/python3.14t"):
        if os.path.isdir(os.path.join(d, "bin")):
            prefixes += ["--prefix", d]
    p = subprocess.run([PYTHON, GEN, "--check"] + prefixes, cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    assert p.returncode == 0, (
        "readers/layouts_generated.c is stale or could not be regenerated "
        "(run tools/gen-layouts.py):\n" + p.stdout + p.stderr)
