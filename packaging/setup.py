"""The coroscope wheel: the static executable as a script, and the plugin.

Run by `make wheel` in a staging directory holding this file,
coroscope_pytest.py and scripts/coroscope (the output of `make static`).
The version is the one the executable itself reports, so the wheel
cannot name another build than the one it carries.
"""
import os
import shutil
import subprocess

from setuptools import setup
from wheel.bdist_wheel import bdist_wheel

try:
    from setuptools.command.build_scripts import build_scripts
except ImportError:     # setuptools before 67 has only distutils' own
    from distutils.command.build_scripts import build_scripts

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.path.join("scripts", "coroscope")

# A statically linked executable asks nothing of the C library, so it
# fits every glibc (manylinux1 is the oldest tag and the one every pip
# knows) and musl systems too.  What it needs is a Linux kernel of 3.4 or
# later (PTRACE_SEIZE) on x86-64.
PLATFORM_TAG = "manylinux_2_5_x86_64.manylinux1_x86_64.musllinux_1_1_x86_64"


def binary_version():
    """The version from `coroscope --version`; refuse a dynamic build."""
    out = subprocess.run([os.path.join(HERE, BINARY), "--version"],
                         stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout.splitlines()
    if len(out) < 2 or not out[1].endswith("(statically linked)"):
        raise SystemExit("setup.py: %s is not statically linked (run "
                         "`make wheel`, which takes `make static`'s)"
                         % BINARY)
    return out[0].split()[1]


class copy_binary_scripts(build_scripts):
    """Copy scripts byte for byte: the stock command would try to read the
    executable as Python source to adjust a shebang line."""

    def run(self):
        self.mkpath(self.build_dir)
        for script in self.scripts:
            dest = os.path.join(self.build_dir, os.path.basename(script))
            shutil.copyfile(script, dest)
            os.chmod(dest, 0o755)


class static_bdist_wheel(bdist_wheel):
    def get_tag(self):
        return "py3", "none", PLATFORM_TAG


setup(
    name="coroscope",
    version=binary_version(),
    description="See where a running or crashed CPython process hangs: "
                "threads, asyncio tasks and generators, from outside",
    long_description=(
        "coroscope reads a running or crashed CPython (3.6 - 3.14) from "
        "outside: every thread's stack, every asyncio task with its await "
        "chain, every generator.  This wheel carries one statically linked "
        "x86-64 Linux executable, `coroscope`, and a pytest plugin: "
        "`pytest --coroscope-timeout=SECONDS` dumps and fails a test that "
        "hangs."),
    long_description_content_type="text/plain",
    python_requires=">=3.6",
    py_modules=["coroscope_pytest"],
    scripts=[BINARY],
    entry_points={"pytest11": ["coroscope = coroscope_pytest"]},
    classifiers=[
        "Framework :: Pytest",
        "Operating System :: POSIX :: Linux",
        "Topic :: Software Development :: Debuggers",
    ],
    cmdclass={"build_scripts": copy_binary_scripts,
              "bdist_wheel": static_bdist_wheel},
    zip_safe=False,
)
