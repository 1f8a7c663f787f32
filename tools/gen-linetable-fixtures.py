#!/usr/bin/env python3
"""Write the line-table fixtures that tests/unit/test_linetable.c checks.

Run under one CPython, this compiles a set of varied functions and, for
every code object reached through co_consts, records the raw line table,
co_firstlineno and the line the interpreter itself reports at each byte
offset.  The oracle is CPython's own PyCode_Addr2Line(), called through
ctypes: it is the function frame.f_lineno uses when no tracer is set, so
it is the semantics coroscope must reproduce.  It is cross-checked against
the documented Python-level views (dis.findlinestarts on 3.6 - 3.9,
co_lines() on 3.10+, co_positions() on 3.11+); any disagreement aborts.

    tools/gen-linetable-fixtures.py --all [OUTDIR]   # every installed CPython
    python3.X tools/gen-linetable-fixtures.py OUTDIR # just this interpreter

OUTDIR defaults to tests/unit/fixtures/linetable.  Each interpreter writes
OUTDIR/<version>.txt, a line-oriented text file:

    python <version> <kind>          kind: lnotab | linetable310 | locations311
    code <name> <firstlineno> <codelen> <table hex, or - when empty>
    range <start> <end> <line>       every even offset in [start, end) maps
                                     to line (-1: no line)
    probe <offset> <line>            one offset outside the ranges (negative,
                                     odd, past the end)
    frame <offset> <line>            a live generator frame: the byte offset
                                     a reader computes from f_lasti (or the
                                     instruction pointer) and f_lineno

The script must stay runnable by Python 3.6.
"""

import ctypes
import dis
import glob
import os
import subprocess
import sys
import types

INTERPRETERS = sorted(glob.glob("/root/.pyenv/versions/3.*/bin/python3.*[0-9]")) + [
    "/usr/bin/python3.11"
]

_addr2line = ctypes.pythonapi.PyCode_Addr2Line
_addr2line.argtypes = (ctypes.py_object, ctypes.c_int)
_addr2line.restype = ctypes.c_int


def kind():
    if sys.version_info < (3, 10):
        return "lnotab"
    if sys.version_info < (3, 11):
        return "linetable310"
    return "locations311"


def raw_table(code):
    return code.co_lnotab if sys.version_info < (3, 10) else code.co_linetable


# -- the source compiled for the fixtures ---------------------------------

def big_source():
    """Source text exercising every encoding corner we know of."""
    blank = "\n" * 300
    many = ", ".join("a%d" % (i % 7) for i in range(200))
    # 150 arguments (3.6 allows 255) spread over 300 lines
    long_call = "".join("        a%d,\n\n" % (i % 7) for i in range(150))
    branches = "".join(
        "    if x == %d:\n        y = [x, x, x, x, x, x, x, x] * %d\n" % (i, i)
        for i in range(40)
    )
    parts = [
        # a module-level statement, then functions
        "import sys\n",
        "X = 1\n",
        "def simple(a, b):\n    c = a + b\n    return c\n",
        # a >255-line forward jump inside one function (blank lines and a
        # comment block produce no code)
        "def far_lines():\n    x = 1\n" + blank + "    # comment\n" + blank
        + "    y = 2\n    return x + y\n",
        # more than 255 bytes of bytecode on one line
        "def big_line(a0, a1, a2, a3, a4, a5, a6):\n    t = [" + many + "]\n"
        "    return t\n",
        # a call spanning 300 lines: the CALL goes back up 300 lines
        "def long_call(f, a0, a1, a2, a3, a4, a5, a6):\n    return f(\n"
        + long_call + "    )\n",
        # loops jump backwards
        "def loops(n):\n    total = 0\n    for i in range(n):\n"
        "        if i % 2:\n            continue\n        total += i\n"
        "    while total > 10:\n        total -= 3\n    else:\n"
        "        total += 1\n    return total\n",
        # multi-line expressions with negative deltas
        "def multiline(a, b, c):\n    return (a +\n            b *\n"
        "            c) if (a >\n                   b) else [\n"
        "        a,\n        b,\n    ]\n",
        # a generator, a nested closure, a lambda, comprehensions
        "def gen(n):\n    x = 0\n    while x < n:\n        yield x\n"
        "        x += 1\n    yield from range(3)\n",
        "def outer(k):\n    def inner(v):\n        return v + k\n"
        "    f = lambda q: (q,\n                   k)\n"
        "    return [inner(i) for i in range(k)], {i: i for i in range(3)}, f\n",
        # try/except/finally and with
        "def handlers(p):\n    try:\n        v = 1 / p\n    except ZeroDivisionError as e:\n"
        "        v = str(e)\n    except (TypeError,\n            ValueError):\n"
        "        v = None\n    else:\n        v = v * 2\n    finally:\n"
        "        w = 3\n    with open(p) as fh, \\\n         open(p) as fh2:\n"
        "        pass\n    return v, w\n",
        # a docstring, lines with no code, a class body
        'class K:\n    """doc"""\n\n    attr = 1\n\n    def method(self):\n'
        '        """method doc"""\n\n        # nothing here\n        return self.attr\n',
        # async code
        "async def coro(aw):\n    r = await aw\n    async with aw as cm:\n"
        "        pass\n    async for item in aw:\n        r += item\n    return r\n",
        # many branches: jump targets beyond 255 bytes need EXTENDED_ARG
        "def branches(x):\n    y = None\n" + branches + "    return y\n",
        # a jump of 70000 lines: needs several lnotab pairs / a long varint
        "def huge_jump():\n    a = 1\n" + "\n" * 70000 + "    return a\n",
    ]
    return "".join(parts)


VERSION_SOURCES = [
    ((3, 8), "def walrus(xs):\n    if (n := len(xs)) > 3:\n        return n\n    return 0\n"),
    ((3, 10), "def matcher(v):\n    match v:\n        case [a, b]:\n            return a\n"
              "        case {'k': c}:\n            return c\n        case _:\n"
              "            return None\n"),
    ((3, 11), "def groups(f):\n    try:\n        f()\n    except* ValueError:\n"
              "        pass\n"),
]


def compiled_modules():
    src = big_source()
    for ver, extra in VERSION_SOURCES:
        if sys.version_info >= ver:
            src += extra
    yield compile(src, "<fixture>", "exec")
    # co_firstlineno of 100000 and more: source padded with blank lines
    padded = "\n" * 99999 + "def far_away(a):\n    b = a * 2\n\n    return b\n"
    yield compile(padded, "<far>", "exec")


def walk(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            for sub in walk(const):
                yield sub


# -- the oracle and its cross-checks --------------------------------------

def oracle(code, offset):
    return _addr2line(code, offset)


def check_python_views(code, lines):
    """Compare the per-offset lines with the Python-level APIs."""
    n = len(code.co_code)
    if sys.version_info < (3, 10):
        starts = list(dis.findlinestarts(code))
        for off in range(0, n, 2):
            want = code.co_firstlineno
            for start, line in starts:
                if start <= off:
                    want = line
            if lines[off // 2] != want:
                raise SystemExit("%s: findlinestarts says %d at %d, Addr2Line %d"
                                 % (code.co_name, want, off, lines[off // 2]))
        return
    for start, end, line in code.co_lines():
        for off in range(start, end, 2):
            want = -1 if line is None else line
            if lines[off // 2] != want:
                raise SystemExit("%s: co_lines says %d at %d, Addr2Line %d"
                                 % (code.co_name, want, off, lines[off // 2]))
    if sys.version_info >= (3, 11):
        for i, pos in enumerate(code.co_positions()):
            want = -1 if pos[0] is None else pos[0]
            if lines[i] != want:
                raise SystemExit("%s: co_positions says %d at %d, Addr2Line %d"
                                 % (code.co_name, want, 2 * i, lines[i]))


def emit_code(out, code):
    table = raw_table(code)
    n = len(code.co_code)
    out.append("code %s %d %d %s" % (code.co_name.replace(" ", "_") or "-",
                                      code.co_firstlineno, n,
                                      table.hex() if table else "-"))
    lines = [oracle(code, off) for off in range(0, n, 2)]
    check_python_views(code, lines)
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or lines[i] != lines[start]:
            out.append("range %d %d %d" % (2 * start, 2 * i, lines[start]))
            start = i
    for off in (-1, -2, -1000, 1, n - 1, n, n + 1, n + 2, n + 1000, 1 << 30):
        out.append("probe %d %d" % (off, oracle(code, off)))


def emit_frames(out):
    """Live generator frames: unstarted, suspended at each yield."""
    src = ("def g(n):\n"
           "    yield 1\n"
           "    for i in range(n):\n"
           "        yield (i,\n"
           "               i)\n"
           "    yield 99\n")
    ns = {}
    exec(compile(src, "<frames>", "exec"), ns)
    gen = ns["g"](2)
    emit_code(out, gen.gi_code)
    while True:
        frame = gen.gi_frame
        lasti = frame.f_lasti
        # What a reader computes from the raw frame.  3.6 - 3.9 store the
        # byte offset in f_lasti; 3.10 stores code units, so an unstarted
        # generator's -1 becomes -2 bytes; from 3.10 Python-level f_lasti is
        # already in bytes, or -1 before the first instruction.
        if lasti < 0 and sys.version_info >= (3, 10):
            lasti = -2
        out.append("frame %d %d" % (lasti, frame.f_lineno))
        try:
            next(gen)
        except StopIteration:
            break


def generate(outdir):
    version = "%d.%d.%d" % sys.version_info[:3]
    out = ["python %s %s" % (version, kind())]
    for module in compiled_modules():
        for code in walk(module):
            emit_code(out, code)
    emit_frames(out)
    path = os.path.join(outdir, version + ".txt")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


def main():
    args = sys.argv[1:]
    run_all = "--all" in args
    args = [a for a in args if a != "--all"]
    outdir = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "unit",
        "fixtures", "linetable")
    if not run_all:
        generate(outdir)
        return
    for py in INTERPRETERS:
        if os.path.exists(py):
            subprocess.check_call([py, os.path.abspath(__file__), outdir])


if __name__ == "__main__":
    main()
