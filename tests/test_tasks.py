"""`coroscope dump`'s second stack: asyncio tasks, generators, coroutines.

targets/asyncio_target.py sets up one scenario per kind of await relation
(a task awaited by several tasks, gather, TaskGroup, an async generator
driven by `async for`, generator-based coroutines, an await cycle,
asyncio.wait, wait_for, shield, a pure-Python task, an eager task, a second
loop on another thread) plus generators outside any task, and records what
the process says about itself: ids, inspect states, lines, the await chains
and who awaits whom.  coroscope, reading from outside, must report the same.
Everything runs once per discovered interpreter; the uvloop variant runs on
Debian's python3.11, and targets/many_tasks_target.py checks 10,000 tasks.

Line numbers come from the target's own records or from "# MARK:" comments.
"""

import collections
import os
import re
import subprocess

import pytest

from conftest import (TSAN, assert_one_error_line, interpreter,
                      marker_line, run_coroscope, target_script,
                      without_moment)
from test_core import first_difference

SCRIPT = target_script("asyncio_target.py")
MANY_SCRIPT = target_script("many_tasks_target.py")
DEBIAN_PYTHON = "/usr/bin/python3.11"

SCALAR_TYPES = ("NoneType", "bool", "int", "float")
TEXT_TYPES = ("str", "bytes")
CONTAINER_TYPES = ("tuple", "list", "dict", "set", "frozenset")
MAX_TEXT = 200

# Scenario name -> (feature flag the target records, why it may be absent).
SCENARIOS = collections.OrderedDict([
    ("shared", (None, None)),
    ("gather", (None, None)),
    ("taskgroup", ("taskgroup", "asyncio.TaskGroup needs Python 3.11+")),
    ("asyncgen", (None, None)),
    ("legacy_chain", (None, None)),
    ("cycle", (None, None)),
    ("wait", (None, None)),
    ("wait_for", (None, None)),
    ("shield", (None, None)),
    ("wait_for_gather", (None, None)),
    ("wait_for_shield", (None, None)),
    ("pytask", ("pytask", "no asyncio.tasks._PyTask in this version")),
    ("eager", ("eager", "asyncio.eager_task_factory needs Python 3.12+")),
    ("side_loop", (None, None)),
    ("recorder", (None, None)),
])


# ---------------------------------------------------------------------------
# One target per interpreter; each coroscope invocation runs once and is
# cached for every test that needs it.

class Ctx(object):
    def __init__(self, target):
        self.target = target
        self.ready = target.ready
        self.pid = target.pid
        self._results = {}
        self._docs = {}

    def run(self, *args):
        if args not in self._results:
            self._results[args] = run_coroscope("dump", *(args + (self.pid,)))
        return self._results[args]

    def doc(self, *extra):
        key = ("--json",) + extra
        if key not in self._docs:
            self._docs[key] = self.run(*key).json()
        return self._docs[key]

    def text(self, *extra):
        res = self.run(*extra)
        assert res.returncode == 0, res
        return res.stdout

    def dot(self):
        res = self.run("--format", "dot")
        assert res.returncode == 0, res
        return res.stdout


class Targets(object):
    """Targets started once per interpreter for the whole module.

    pytest interleaves interpreters when a test stacks its own
    parametrization on the module-scoped `interp` (scenario, role); keeping
    each interpreter's targets alive until the module ends means that costs
    nothing.  module_keeper kills them all at the end.
    """

    def __init__(self, keeper):
        self.keeper = keeper
        self.started = {}

    def get(self, interp, script, make):
        key = (interp.id, script)
        if key not in self.started:
            try:
                self.started[key] = make(self.keeper.start_target(
                    interp, script, parked_main=True))
            except pytest.fail.Exception as e:
                # Fail the other tests at once instead of waiting again.
                self.started[key] = e
        if isinstance(self.started[key], pytest.fail.Exception):
            pytest.fail("%s under %s: %s" % (script, interp.id,
                                             self.started[key]))
        return self.started[key]


@pytest.fixture(scope="module")
def targets(module_keeper):
    return Targets(module_keeper)


@pytest.fixture
def ctx(interp, targets):
    return targets.get(interp, "asyncio_target.py", Ctx)


def uvloop_skip_reason():
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        return "no %s" % DEBIAN_PYTHON
    try:
        out = subprocess.run([DEBIAN_PYTHON, "-c", "import uvloop"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=30, universal_newlines=True)
    except (OSError, subprocess.SubprocessError) as e:
        return "cannot run %s: %s" % (DEBIAN_PYTHON, e)
    if out.returncode != 0:
        return ("python3-uvloop is not importable by %s (the Makefile's "
                "test packages install it): %s"
                % (DEBIAN_PYTHON, out.stderr.strip().splitlines()[-1:]))
    return None


@pytest.fixture(scope="module")
def uv_ctx(module_keeper):
    why = uvloop_skip_reason()
    if why:
        pytest.skip(why)
    debian = interpreter("3.11-debian") or DEBIAN_PYTHON
    t = module_keeper.start_target(debian, "asyncio_target.py", "--uvloop",
                                   parked_main=True)
    assert t.ready["uvloop"] and t.ready["loop_type"] == "uvloop.Loop", \
        t.ready["loop_type"]
    yield Ctx(t)
    t.proc.kill()
    t.proc.wait()


# ---------------------------------------------------------------------------
# Helpers

def hexid(value, what="id"):
    """The integer behind a "0x..." id; fails the test on anything else."""
    assert isinstance(value, str) and re.match(r"^0x[0-9a-f]+$", value), \
        "%s is not a lower-case hex string '0x...': %r" % (what, value)
    return int(value, 16)


def hexre(ident):
    """A regex for id `ident` printed as hex (leading zeros allowed)."""
    return r"0x0*%x\b" % ident


def dump_tasks(doc):
    assert "tasks" in doc, \
        "no 'tasks' in the JSON dump (keys %s)" % sorted(doc)
    by_id = {}
    for t in doc["tasks"]:
        ident = hexid(t.get("id"), "task id")
        assert ident not in by_id, "task listed twice: %r" % t
        by_id[ident] = t
    return by_id


def dump_generators(doc):
    assert "generators" in doc, \
        "no 'generators' in the JSON dump (keys %s)" % sorted(doc)
    by_id = {}
    for g in doc["generators"]:
        ident = hexid(g.get("id"), "generator id")
        assert ident not in by_id, "generator listed twice: %r" % g
        by_id[ident] = g
    return by_id


def recorder_line(ctx):
    return marker_line(ctx.target.script, "recorder-park")


def want_tasks(ctx):
    """{id: recorded task}; the running recorder's line is its marker's."""
    out = {}
    for t in ctx.ready["tasks"]:
        t = dict(t)
        if t["role"] == "recorder":
            top = dict(t["stack"][0])
            top["line"] = recorder_line(ctx)
            t["stack"] = [top] + t["stack"][1:]
        out[t["id"]] = t
    return out


def want_generators(ctx):
    recorder = [t for t in ctx.ready["tasks"] if t["role"] == "recorder"][0]
    out = {}
    for g in ctx.ready["generators"]:
        g = dict(g)
        if g["id"] == recorder["coro"]:
            g["line"] = recorder_line(ctx)
        out[g["id"]] = g
    return out


def role_task(ctx, role):
    hits = [t for t in ctx.ready["tasks"] if t["role"] == role]
    assert len(hits) == 1, "target recorded no task %r" % role
    return hits[0]


def task_label(t):
    return "%s (%s)" % (t["role"], t["name"])


def frame_problems(where, got, want):
    """Differences between a dumped stack frame and a recorded level."""
    problems = []
    if not isinstance(got, dict):
        return ["%s: frame is not an object: %r" % (where, got)]
    try:
        if hexid(got.get("id"), "frame id") != want["id"]:
            problems.append("%s: id %s, want %#x" % (where, got.get("id"),
                                                     want["id"]))
    except AssertionError as e:
        problems.append("%s: %s" % (where, e))
    for key in ("file", "line", "function", "kind"):
        if got.get(key) != want[key]:
            problems.append("%s: %s %r, want %r" % (where, key, got.get(key),
                                                    want[key]))
    if want["code_qualname"] is not None:
        allowed = (want["code_qualname"],)
    else:
        # Before 3.11 code objects have no qualname: the generator's
        # __qualname__ or the code's name both honour the contract.
        allowed = (want["qualname"], want["function"])
    if got.get("qualname") not in allowed:
        problems.append("%s: qualname %r, want one of %r"
                        % (where, got.get("qualname"), allowed))
    return problems


def task_problems(got, want):
    """Everything but "thread" (check_task_threads tests that alone)."""
    where = "task %s" % task_label(want)
    problems = []
    for key in ("name", "state"):
        if got.get(key) != want[key]:
            problems.append("%s: %s %r, want %r" % (where, key, got.get(key),
                                                    want[key]))
    for key in ("loop", "coro"):
        value = got.get(key)
        if not isinstance(value, str) or not value.startswith("0x") or \
                int(value, 16) != want[key]:
            problems.append("%s: %s %r, want %#x" % (where, key, value,
                                                     want[key]))
    stack = got.get("stack")
    if not isinstance(stack, list) or len(stack) != len(want["stack"]):
        problems.append("%s: stack %r, want %d frames %r" % (
            where, stack, len(want["stack"]),
            [(f["qualname"], f["line"]) for f in want["stack"]]))
    else:
        for n, (g, w) in enumerate(zip(stack, want["stack"])):
            problems += frame_problems("%s frame %d" % (where, n), g, w)
    awaiting = got.get("awaiting", "absent")
    if want["awaiting"] is None:
        if awaiting is not None:
            problems.append("%s: awaiting %r, want null" % (where, awaiting))
    elif not isinstance(awaiting, dict) or \
            awaiting.get("type") != want["awaiting"]["type"] or \
            not isinstance(awaiting.get("id"), str) or \
            int(awaiting["id"], 16) != want["awaiting"]["id"]:
        problems.append("%s: awaiting %r, want {id: %#x, type: %s}" % (
            where, awaiting, want["awaiting"]["id"],
            want["awaiting"]["type"]))
    by = got.get("awaited_by")
    if not isinstance(by, list):
        problems.append("%s: awaited_by %r is not a list" % (where, by))
    else:
        got_set = set(int(b, 16) for b in by if isinstance(b, str))
        if len(by) != len(got_set):
            problems.append("%s: awaited_by %r has duplicates or non-ids"
                            % (where, by))
        if got_set != set(want["awaited_by"]):
            problems.append("%s: awaited_by %s, want %s" % (
                where, sorted("%#x" % i for i in got_set),
                sorted("%#x" % i for i in want["awaited_by"])))
    return problems


def is_agen_in_async_for(want):
    """The async generator parked in an await while `async for` drives it.

    Its inspect state is "running" from 3.8 on (ag_running is true while an
    asend is in progress); test_async_generator_state checks it alone so
    that this quirk cannot hide other state mismatches.
    """
    return want["kind"] == "async_generator" and want["task"] is not None


def generator_problems(got, want, check_state=True):
    where = "%s %s %s:%s" % (want["kind"], want["qualname"],
                             os.path.basename(want["file"]), want["line"])
    problems = []
    for key in ("kind", "qualname", "file", "line"):
        if got.get(key) != want[key]:
            problems.append("%s: %s %r, want %r" % (where, key, got.get(key),
                                                    want[key]))
    if check_state and got.get("state") != want["state"]:
        problems.append("%s: state %r, want %r" % (where, got.get("state"),
                                                   want["state"]))
    awaiting = got.get("awaiting", "absent")
    if want["awaiting"] is None:
        if awaiting is not None:
            problems.append("%s: awaiting %r, want null" % (where, awaiting))
    elif not isinstance(awaiting, str) or not awaiting.startswith("0x") or \
            int(awaiting, 16) != want["awaiting"]:
        problems.append("%s: awaiting %r, want %#x (a %s)" % (
            where, awaiting, want["awaiting"], want["awaiting_type"]))
    task = got.get("task", "absent")
    allowed = [want["task"]]
    if "done_task" in want:
        # The coroutine of a finished task: that task is not listed, so
        # either answer is fair.
        allowed.append(want["done_task"])
    task_int = task
    if isinstance(task, str) and task.startswith("0x"):
        task_int = int(task, 16)
    if task_int not in allowed:
        problems.append("%s: task %r, want %s" % (
            where, task, " or ".join("null" if a is None else "%#x" % a
                                     for a in allowed)))
    return problems


def scenario_tasks(ctx, scenario):
    feature, why = SCENARIOS[scenario]
    if feature is not None and not ctx.ready["features"][feature]:
        pytest.skip(why)
    tasks = [t for t in want_tasks(ctx).values()
             if t["scenario"] == scenario]
    assert tasks, "target recorded no task for scenario %r" % scenario
    return tasks


def local_problems(where, got_locals, want_locals):
    if not isinstance(got_locals, dict):
        return ["%s: locals %r is not an object" % (where, got_locals)]
    problems = []
    if sorted(got_locals) != sorted(want_locals):
        problems.append("%s: local names %s, want %s" % (
            where, sorted(got_locals), sorted(want_locals)))
    for name, info in sorted(want_locals.items()):
        got = got_locals.get(name)
        if got is None:
            continue
        t = info["type"]
        if not isinstance(got, str):
            problems.append("%s: %s = %r is not a string" % (where, name, got))
        elif t in SCALAR_TYPES or (t in TEXT_TYPES and
                                   info["len"] <= MAX_TEXT):
            if got != info["repr"]:
                problems.append("%s: %s = %r, want %s" % (where, name, got,
                                                          info["repr"]))
        elif t not in CONTAINER_TYPES and t not in TEXT_TYPES:
            if t not in got or not re.search(hexre(info["id"]), got):
                problems.append("%s: %s = %r, want <%s object at %#x>" % (
                    where, name, got, t, info["id"]))
    return problems


# ---------------------------------------------------------------------------
# Checks, shared by the per-interpreter tests and the uvloop ones.

def check_target_self(ctx):
    """The target parked where its markers say (else the target is wrong)."""
    lines = set()
    for t in ctx.ready["tasks"]:
        assert t["role"] != "unregistered", \
            "the target has a task it did not set up: %r" % t
        for f in t["stack"]:
            if f["file"] == ctx.ready["main_file"]:
                lines.add(f["line"])
    for g in ctx.ready["generators"]:
        if g["file"] == ctx.ready["main_file"]:
            lines.add(g["line"])
    marks = ["leaf-await", "shared-target", "shared-waiter", "gather-child",
             "gather-await", "agen-await", "agen-for", "legacy-inner",
             "legacy-outer", "legacy-await", "ping", "pong", "wait",
             "wait-for", "shield", "wait-for-gather", "wait-for-shield",
             "side-sleep", "side-main", "gen3-yield",
             "gen2-yieldfrom", "gen1-yieldfrom", "twin-yield", "gen-running"]
    if ctx.ready["features"]["taskgroup"]:
        marks.append("tg-child")
    if ctx.ready["features"]["eager"]:
        marks.append("eager")
    if ctx.ready["features"]["pytask"]:
        marks.append("pytask-waiter")
    missing = [m for m in marks if marker_line(SCRIPT, m) not in lines]
    assert not missing, "target not parked at markers %s" % missing
    roles = [t["role"] for t in ctx.ready["tasks"]]
    assert len(roles) == len(set(roles)), roles


def check_task_set(ctx):
    got = dump_tasks(ctx.doc())
    want = want_tasks(ctx)
    missing = [task_label(want[i]) for i in want if i not in got]
    extra = ["%#x %r" % (i, got[i].get("name")) for i in got if i not in want]
    assert not missing and not extra, \
        "tasks missing: %s; not pending tasks of the target: %s" % (
            missing, extra)
    for role, ident in ctx.ready["done_tasks"].items():
        assert ident not in got, "done task %s listed" % role


def check_scenario(ctx, scenario):
    tasks = scenario_tasks(ctx, scenario)
    doc = ctx.doc()
    got = dump_tasks(doc)
    problems = []
    for want in tasks:
        if want["id"] not in got:
            problems.append("task %s (%#x) not listed" % (task_label(want),
                                                          want["id"]))
            continue
        problems += task_problems(got[want["id"]], want)
    # The coroutines and generators in these tasks' await chains.
    gens = dump_generators(doc)
    ids = set(t["id"] for t in tasks)
    for want in want_generators(ctx).values():
        if want["task"] not in ids:
            continue
        if want["id"] not in gens:
            problems.append("%s %s of task %#x not in generators" % (
                want["kind"], want["qualname"], want["task"]))
            continue
        problems += generator_problems(gens[want["id"]], want,
                                       not is_agen_in_async_for(want))
    assert not problems, "\n".join(problems)


def check_task_threads(ctx):
    got = dump_tasks(ctx.doc())
    problems = []
    for want in want_tasks(ctx).values():
        t = got.get(want["id"])
        if t is not None and t.get("thread") != want["thread"]:
            problems.append("task %s: thread %r, want %r (%s)" % (
                task_label(want), t.get("thread"), want["thread"],
                "main thread" if want["thread"] == ctx.ready["main_tid"]
                else "loop-thread"))
    assert not problems, "\n".join(problems)


def check_generator_set(ctx):
    gens = dump_generators(ctx.doc())
    want = want_generators(ctx)
    missing = ["%s %s %s:%s" % (w["kind"], w["qualname"], w["file"], w["line"])
               for i, w in want.items() if i not in gens]
    extra = ["%#x %r" % (i, g) for i, g in gens.items() if i not in want]
    assert not missing and not extra, \
        "generators missing: %s\nlisted but not live in the target: %s" % (
            missing, extra)


def check_generators(ctx):
    gens = dump_generators(ctx.doc())
    problems = []
    for want in want_generators(ctx).values():
        if want["id"] in gens:
            problems += generator_problems(gens[want["id"]], want,
                                           not is_agen_in_async_for(want))
    assert not problems, "\n".join(problems)


def check_plain_generators(ctx, role):
    """Generators and coroutines outside any task, by what they are."""
    want_all = want_generators(ctx)
    gens = dump_generators(ctx.doc())
    if role == "chain":
        root = [g for g in want_all.values() if g["role"] == "chain"][0]
        wants = [root]
        while wants[-1]["awaiting"] is not None:
            wants.append(want_all[wants[-1]["awaiting"]])
        assert [w["qualname"] for w in wants] == \
            ["gen_level1", "gen_level2", "gen_level3"], wants
    else:
        wants = [g for g in want_all.values() if g["role"] == role]
    assert wants, "target recorded no %r generator" % role
    expect_state = {"chain": "suspended", "twin": "suspended",
                    "running": "running", "never": "created",
                    "closed": "closed", "exhausted": "closed",
                    "closed-coro": "closed"}[role]
    problems = []
    for w in wants:
        assert w["state"] == expect_state or role == "chain", w
        if w["id"] not in gens:
            problems.append("%s %s (%s) not listed" % (w["kind"],
                                                       w["qualname"], role))
            continue
        problems += generator_problems(gens[w["id"]], w)
    assert not problems, "\n".join(problems)


def check_async_generator_state(ctx):
    wants = [g for g in want_generators(ctx).values()
             if is_agen_in_async_for(g)]
    assert len(wants) == 1, wants
    want = wants[0]
    got = dump_generators(ctx.doc()).get(want["id"])
    assert got is not None, "async generator ticker not listed"
    assert got.get("state") == want["state"], (
        "async generator parked in an await inside `async for`: state %r, "
        "want %r (inspect's answer on %s)" % (got.get("state"), want["state"],
                                             ctx.ready["version"]))


def check_locals(ctx):
    doc = ctx.doc("--locals")
    gens = dump_generators(doc)
    problems = []
    checked = 0
    for want in want_generators(ctx).values():
        if "locals" not in want or want["id"] not in gens:
            continue
        got = gens[want["id"]]
        where = "%s %s:%s" % (want["qualname"],
                              os.path.basename(want["file"]), want["line"])
        if "locals" not in got:
            problems.append("%s: no 'locals' with --locals" % where)
            continue
        problems += local_problems(where, got["locals"], want["locals"])
        checked += 1
    assert checked >= 20 or problems, checked
    # Task stack frames are thread-style frames: they carry the same locals.
    want_all = want_generators(ctx)
    for t in dump_tasks(doc).values():
        for fr in t.get("stack") or []:
            where = "task %s frame %s" % (t.get("name"), fr.get("function"))
            if not isinstance(fr.get("locals"), dict):
                problems.append("%s: no 'locals' with --locals" % where)
                continue
            want = want_all.get(int(fr.get("id", "0x0"), 16))
            if want is not None and "locals" in want:
                problems += local_problems(where, fr["locals"],
                                           want["locals"])
    # The three-deep chain's innermost generator, spelled out.
    g3 = [g for g in want_generators(ctx).values()
          if g["qualname"] == "gen_level3"][0]
    got3 = gens.get(g3["id"], {}).get("locals")
    if got3 != {"depth": "3", "label": "'chain'"}:
        problems.append("gen_level3 locals %r, want depth=3 label='chain'"
                        % (got3,))
    never = [g for g in want_generators(ctx).values()
             if g["role"] == "never"][0]
    got_never = gens.get(never["id"], {}).get("locals")
    if got_never != {"n": "7", "tag": "'x'"}:
        problems.append("never-awaited coroutine locals %r, want n=7 tag='x'"
                        % (got_never,))
    assert not problems, "\n".join(problems)


def check_no_locals_without_flag(ctx):
    doc = ctx.doc()
    for g in dump_generators(doc).values():
        assert "locals" not in g, g
    for t in dump_tasks(doc).values():
        for f in t.get("stack") or []:
            assert "locals" not in f, f


def cycle_ids(ctx):
    return (role_task(ctx, "ping")["id"], role_task(ctx, "pong")["id"])


def check_await_cycles_json(ctx):
    doc = ctx.doc()
    assert "await_cycles" in doc, "no 'await_cycles' (keys %s)" % sorted(doc)
    cycles = doc["await_cycles"]
    assert isinstance(cycles, list), cycles
    got = [[hexid(i, "cycle member") for i in c] for c in cycles]
    a, b = cycle_ids(ctx)
    # Only ping <-> pong is a cycle in the target; either rotation.
    assert got in ([[a, b]], [[b, a]]), \
        "await_cycles %r, want [[%#x, %#x]] (ping, pong) once" % (cycles, a, b)


def check_main_thread_runs_recorder(ctx):
    threads = ctx.doc()["threads"]
    main = [t for t in threads if t.get("tid") == ctx.ready["main_tid"]]
    assert len(main) == 1, threads
    top = main[0]["frames"][0]
    want = ("recorder", ctx.ready["main_file"], recorder_line(ctx),
            "coroutine")
    assert (top["function"], top["file"], top["line"], top["kind"]) == want, \
        main[0]["frames"][:3]


def check_running_generator_thread(ctx):
    threads = ctx.doc()["threads"]
    runner = [t for t in threads
              if t.get("tid") == ctx.ready["gen_thread_tid"]]
    assert len(runner) == 1, threads
    frames = [(f["function"], f["line"], f["kind"])
              for f in runner[0]["frames"]
              if f["file"] == ctx.ready["main_file"]]
    assert frames == [
        ("blocking_gen", marker_line(SCRIPT, "gen-running"), "generator"),
        ("gen_thread_main", marker_line(SCRIPT, "gen-thread-next"),
         "function")], runner[0]["frames"]


def check_format_json(ctx):
    a = ctx.doc()
    res = ctx.run("--format", "json")
    assert res.returncode == 0, res
    b = res.json()
    for key in ("tasks", "generators", "await_cycles"):
        assert key in b, "--format json lacks %r" % key
    # (two readings: a sleeping task's wakes_in_s moves between them)
    ta, tb = dump_tasks(without_moment(a)), dump_tasks(without_moment(b))
    assert sorted(ta) == sorted(tb)
    for ident in ta:
        assert ta[ident] == tb[ident], (ta[ident], tb[ident])
    assert sorted(dump_generators(a)) == sorted(dump_generators(b))


# Text output ---------------------------------------------------------------

def text_lines_with(text, ident):
    pat = re.compile(hexre(ident))
    return [line for line in text.splitlines() if pat.search(line)]


def check_text_tasks(ctx):
    # Every task on its own line: --all (alike tasks are grouped without
    # it, see test_present.py).
    text = ctx.text("--all")
    problems = []
    for want in want_tasks(ctx).values():
        # "(T) NAME 0x...  STATE", as in the contract.
        pat = re.compile(r"\(T\)\s+%s\s+%s.*\b%s\b" % (
            re.escape(want["name"]), hexre(want["id"]), want["state"]))
        if not any(pat.search(line) for line in text.splitlines()):
            problems.append("no line '(T) %s %#x %s'" % (
                want["name"], want["id"], want["state"]))
    assert not problems, "\n".join(problems) + "\n--- output ---\n" + text


def check_text_loop_headers(ctx):
    text = ctx.text()
    headers = [line.strip() for line in text.splitlines()
               if re.match(r"^Tasks of (event )?loop ", line.strip())]
    for loop, tid, name in (("main", ctx.ready["main_tid"], "MainThread"),
                            ("side", ctx.ready["side_tid"], "loop-thread")):
        ident = ctx.ready["loops"][loop]
        hits = [h for h in headers if re.search(hexre(ident), h)
                and "thread %d" % tid in h and '"%s"' % name in h]
        assert len(hits) == 1, (
            "want one 'Tasks of loop %#x (thread %d \"%s\"):' header, "
            "headers: %r" % (ident, tid, name, headers))
    assert len(headers) == 2, headers
    # The wording, separately, so a mismatch above means wrong content.
    wrong = [h for h in headers if not h.startswith("Tasks of loop 0x")]
    assert not wrong, ("the contract's header is 'Tasks of loop 0x... "
                       "(thread TID \"NAME\"):', got %r" % wrong)


def check_text_await_cycle(ctx):
    text = ctx.text()
    cycles = [line.strip() for line in text.splitlines()
              if line.strip().startswith("await cycle:")]
    assert cycles in (["await cycle: ping -> pong -> ping"],
                      ["await cycle: pong -> ping -> pong"]), \
        "await cycle lines %r\n--- output ---\n%s" % (cycles, text)


def _indent(line):
    stripped = line.lstrip(" \t\u2502\u251c\u2514\u2500|`-+")
    return len(line) - len(stripped)


def subtree(text, ident):
    """The lines under the (first) line that shows task `ident`."""
    lines = text.splitlines()
    pat = re.compile(hexre(ident))
    for n, line in enumerate(lines):
        if pat.search(line) and "(T)" in line:
            base = _indent(line)
            out = []
            for below in lines[n + 1:]:
                if below.strip() and _indent(below) <= base:
                    break
                out.append(below)
            return line, out
    return None, []


def check_text_children_nested(ctx, parent_role, child_prefix):
    """Children awaited through gather/TaskGroup appear under the parent's
    awaiting frame: below one of its frame lines and indented deeper
    (--all: each child on its own line, even when they are alike)."""
    text = ctx.text("--all")
    parent = role_task(ctx, parent_role)
    children = [t for t in ctx.ready["tasks"]
                if t["role"].startswith(child_prefix)]
    assert len(children) == 2, children
    head, below = subtree(text, parent["id"])
    assert head is not None, "no '(T) ... %#x' line for %s\n%s" % (
        parent["id"], parent_role, text)
    outer = parent["stack"][-1]
    where = "%s:%d" % (outer["file"], outer["line"])
    frame_at = [n for n, line in enumerate(below)
                if re.search(r"\b%s\b" % re.escape(outer["function"]), line)
                and where in line]
    assert frame_at, "no frame line '%s  %s' under %s:\n%s\n%s" % (
        outer["function"], where, parent_role, head, "\n".join(below))
    first = frame_at[0]
    for child in children:
        pat = re.compile(hexre(child["id"]))
        hits = [line for line in below[first + 1:]
                if pat.search(line) and "(T)" in line
                and _indent(line) > _indent(below[first])]
        assert hits, (
            "task %s (%#x) is not shown under %s's frame %s:\n%s\n%s"
            "\n--- output ---\n%s" % (child["role"], child["id"],
                                      parent_role, outer["function"], head,
                                      "\n".join(below), text))


def generator_section(text):
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.strip().startswith(
                "Generators and coroutines not owned by a task"):
            out = []
            for below in lines[n + 1:]:
                if below.strip() and not below[:1].isspace():
                    break
                out.append(below)
            return out
    return None


def check_text_generators(ctx):
    text = ctx.text()
    section = generator_section(text)
    assert section is not None, \
        "no 'Generators and coroutines not owned by a task' section:\n" + text
    want_all = want_generators(ctx)
    f = ctx.ready["main_file"]
    problems = []
    for qualname, mark in (("gen_level1", "gen1-yieldfrom"),
                           ("gen_level2", "gen2-yieldfrom"),
                           ("gen_level3", "gen3-yield")):
        w = [g for g in want_all.values() if g["qualname"] == qualname][0]
        hits = [line for line in section
                if re.search(r"\b%s\b" % qualname, line)]
        where = "%s:%d" % (f, marker_line(SCRIPT, mark))
        if len(hits) != 1 or "suspended" not in hits[0] or \
                where not in hits[0] or not re.search(hexre(w["id"]), hits[0]):
            problems.append("want one line 'suspended generator %s %s %#x', "
                            "got %r" % (qualname, where, w["id"], hits))
    never = [g for g in want_all.values() if g["role"] == "never"][0]
    hits = [line for line in section if "never_awaited" in line
            and "created" in line]
    if len(hits) != 1 or "%s:%d" % (f, never["line"]) not in hits[0]:
        problems.append("want one line 'created coroutine never_awaited "
                        "%s:%d', got %r" % (f, never["line"], hits))
    hits = [line for line in section if "blocking_gen" in line]
    where = "%s:%d" % (f, marker_line(SCRIPT, "gen-running"))
    if len(hits) != 1 or "running" not in hits[0] or where not in hits[0]:
        problems.append("want one line 'running generator blocking_gen %s', "
                        "got %r" % (where, hits))
    # Identical qualname + file + line + state collapse to "N x ...".
    hits = [line for line in section if re.search(r"\btwin\b", line)]
    if len(hits) != 1 or not re.search(r"\b3 x\b", hits[0]) or \
            "suspended" not in hits[0]:
        problems.append("want the three twins collapsed to one '3 x "
                        "suspended generator twin' line, got %r" % hits)
    hits = [line for line in section if re.search(r"\bclosable\b", line)]
    if len(hits) != 1 or not re.search(r"\b2 x\b", hits[0]) or \
            "closed" not in hits[0]:
        problems.append("want the closed and the exhausted 'closable' "
                        "collapsed to one '2 x closed generator closable' "
                        "line, got %r" % hits)
    # Owned by tasks: not in this section.
    for qualname in ("shared_waiter", "gather_child", "ticker",
                     "legacy_inner"):
        hits = [line for line in section
                if re.search(r"\b%s\b" % qualname, line)]
        if hits:
            problems.append("%s belongs to a task but is listed as not "
                            "owned: %r" % (qualname, hits))
    assert not problems, "\n".join(problems) + "\n--- section ---\n" + \
        "\n".join(section)


# Graphviz -------------------------------------------------------------------

DOT_ID = r'("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.]+)'


def parse_dot(text):
    """({node: attribute text}, [(tail, head)]) of a simple DOT digraph."""
    nodes, edges = {}, []

    def unquote(s):
        return s[1:-1].replace('\\"', '"') if s.startswith('"') else s

    for line in text.splitlines():
        for m in re.finditer(DOT_ID + r"\s*->\s*" + DOT_ID, line):
            edges.append((unquote(m.group(1)), unquote(m.group(2))))
        m = re.match(r"^\s*" + DOT_ID + r"\s*\[(.*)\]\s*;?\s*$", line)
        if m and "->" not in line:
            name = unquote(m.group(1))
            if name not in ("node", "edge", "graph"):
                nodes[name] = m.group(2)
    for a, b in edges:
        nodes.setdefault(a, "")
        nodes.setdefault(b, "")
    return nodes, edges


def dot_label(attrs):
    m = re.search(r'label\s*=\s*"((?:[^"\\]|\\.)*)"', attrs)
    if m:
        return m.group(1)
    m = re.search(r"label\s*=\s*([^\s,\]]+)", attrs)
    return m.group(1) if m else ""


def task_nodes(nodes, tasks):
    """{task id: node}, by the task's hex id in the node name or label,
    else by a label naming exactly one task."""
    names = collections.Counter(t["name"] for t in tasks)
    out = {}
    for t in tasks:
        hexed = "%x" % t["id"]
        by_id = [n for n in nodes if hexed in n.lower()]
        if len(by_id) != 1:
            by_id = [n for n in nodes if hexed in dot_label(nodes[n]).lower()]
        if len(by_id) == 1:
            out[t["id"]] = by_id[0]
            continue
        if names[t["name"]] == 1:
            by_name = [n for n in nodes
                       if dot_label(nodes[n]).split("\\n")[0].strip()
                       == t["name"]]
            if len(by_name) == 1:
                out[t["id"]] = by_name[0]
    return out


def reachable(edges, start):
    succ = collections.defaultdict(set)
    for a, b in edges:
        succ[a].add(b)
    seen, todo = set([start]), [start]
    while todo:
        for nxt in succ[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def check_dot(ctx):
    text = ctx.dot()
    assert re.match(r"^\s*(strict\s+)?digraph\b", text), text[:500]
    assert text.count("{") == text.count("}"), text
    assert text.rstrip().endswith("}"), text[-500:]
    nodes, edges = parse_dot(text)
    tasks = list(want_tasks(ctx).values())
    mapped = task_nodes(nodes, tasks)
    unique = collections.Counter(t["name"] for t in tasks)
    problems = []
    for t in tasks:
        if t["id"] not in mapped:
            if unique[t["name"]] == 1 or ctx.ready["features"]["names"]:
                problems.append("no node for task %s (%#x)" % (
                    task_label(t), t["id"]))
            continue
        label = dot_label(nodes[mapped[t["id"]]])
        if t["name"] not in label:
            problems.append("node %s of task %s has label %r" % (
                mapped[t["id"]], task_label(t), label))
    # An edge path for every await between tasks: cycles show as cycles.
    for t in tasks:
        for waiter in t["awaited_by"]:
            if waiter not in mapped or t["id"] not in mapped:
                continue
            if mapped[t["id"]] not in reachable(edges, mapped[waiter]):
                problems.append("no edge path from %s to the task it awaits, "
                                "%s" % (mapped[waiter], mapped[t["id"]]))
    ping, pong = cycle_ids(ctx)
    if ping not in mapped or pong not in mapped:
        problems.append("ping and pong have no nodes")
    assert not problems, "\n".join(problems) + "\n--- dot ---\n" + text


def check_dot_coroutine_nodes(ctx):
    """The contract: a node per generator/coroutine in a task's chain, with
    an "awaits" edge path from its task to it."""
    nodes, edges = parse_dot(ctx.dot())
    tasks = list(want_tasks(ctx).values())
    mapped = task_nodes(nodes, tasks)
    problems = []
    for t in tasks:
        for fr in t["stack"]:
            hexed = "%x" % fr["id"]
            hits = [n for n in nodes if hexed in n.lower()
                    or hexed in dot_label(nodes[n]).lower()]
            if len(hits) != 1:
                problems.append("task %s: no node for %s %s (%#x)" % (
                    task_label(t), fr["kind"], fr["qualname"], fr["id"]))
            elif t["id"] in mapped and \
                    hits[0] not in reachable(edges, mapped[t["id"]]):
                problems.append("task %s: no edge path to its %s %s" % (
                    task_label(t), fr["kind"], fr["qualname"]))
    assert not problems, "\n".join(problems[:20]) + \
        "\n(%d problems)" % len(problems)


# ---------------------------------------------------------------------------
# Tests, once per interpreter

def test_target_parked_at_markers(ctx):
    check_target_self(ctx)


def test_tasks_exactly_the_pending_ones(ctx):
    check_task_set(ctx)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_scenario(ctx, scenario):
    check_scenario(ctx, scenario)


def test_task_threads(ctx):
    check_task_threads(ctx)


def test_every_live_generator_listed(ctx):
    check_generator_set(ctx)


def test_generators_match_the_target(ctx):
    check_generators(ctx)


@pytest.mark.parametrize("role", ["chain", "running", "never", "closed",
                                  "exhausted", "closed-coro", "twin"])
def test_generator_outside_tasks(ctx, role):
    check_plain_generators(ctx, role)


def test_async_generator_state(ctx):
    check_async_generator_state(ctx)


def test_generator_locals(ctx):
    check_locals(ctx)


def test_no_locals_without_flag(ctx):
    check_no_locals_without_flag(ctx)


def test_await_cycles_json(ctx):
    check_await_cycles_json(ctx)


def test_main_thread_runs_the_recorder(ctx):
    check_main_thread_runs_recorder(ctx)


def test_running_generator_thread(ctx):
    check_running_generator_thread(ctx)


def test_format_json(ctx):
    check_format_json(ctx)


def test_text_lists_tasks(ctx):
    check_text_tasks(ctx)


def test_text_loop_headers(ctx):
    check_text_loop_headers(ctx)


def test_text_await_cycle(ctx):
    check_text_await_cycle(ctx)


def test_text_gather_children_nested(ctx):
    check_text_children_nested(ctx, "gather-parent", "gather-child-")


def test_text_taskgroup_children_nested(ctx):
    if not ctx.ready["features"]["taskgroup"]:
        pytest.skip(SCENARIOS["taskgroup"][1])
    check_text_children_nested(ctx, "tg-parent", "tg-child-")


def test_text_generators_section(ctx):
    check_text_generators(ctx)


def test_dot(ctx):
    check_dot(ctx)


def test_dot_coroutine_nodes(ctx):
    check_dot_coroutine_nodes(ctx)


# ---------------------------------------------------------------------------
# 10,000 tasks

def _many_dump(target):
    return target, run_coroscope("dump", "--json", target.pid, timeout=60)


@pytest.fixture
def many(interp, targets):
    return targets.get(interp, "many_tasks_target.py", _many_dump)


def test_many_tasks_all_listed(many):
    target, res = many
    got = dump_tasks(res.json())
    want = set(target.ready["task_ids"]) | set([target.ready["recorder"]])
    assert len(want) == target.ready["count"] + 1
    missing = len(want - set(got))
    extra = len(set(got) - want)
    assert not missing and not extra, \
        "%d tasks listed, want %d: %d missing, %d unknown" % (
            len(got), len(want), missing, extra)
    shared = target.ready["shared_future"]
    wrong = []
    for ident, t in got.items():
        if ident == target.ready["recorder"]:
            continue
        aw = t.get("awaiting") or {}
        if t.get("state") != "pending" or aw.get("type") != "Future" or \
                int(aw.get("id", "0x0"), 16) != shared or \
                len(t.get("stack") or []) != 5 or t.get("awaited_by") != []:
            wrong.append(t)
    assert not wrong, "%d tasks wrong, e.g. %r" % (len(wrong), wrong[:2])


def test_many_tasks_samples(many):
    target, res = many
    got = dump_tasks(res.json())
    f = target.ready["main_file"]
    lines = [marker_line(MANY_SCRIPT, "many-level%d" % n)
             for n in (5, 4, 3, 2, 1)]
    for i, sample in sorted(target.ready["samples"].items()):
        t = got.get(sample["id"])
        assert t is not None, "task %s (%#x) missing" % (i, sample["id"])
        assert t["name"] == sample["name"], t
        assert int(t["coro"], 16) == sample["coro"], t
        assert [(hexid(fr["id"]), fr["function"], fr["file"], fr["line"])
                for fr in t["stack"]] == \
            [(fr["id"], fr["qualname"], f, line)
             for fr, line in zip(sample["stack"], lines)], t["stack"]
    rec = got.get(target.ready["recorder"])
    assert rec is not None, "recorder task missing"
    assert rec["state"] == "running", rec
    assert [(fr["function"], fr["line"]) for fr in rec["stack"]] == \
        [("recorder", marker_line(MANY_SCRIPT, "many-recorder-park"))], rec


def test_many_tasks_generators(many):
    target, res = many
    doc = res.json()
    gens = dump_generators(doc)
    owned = collections.Counter()
    for g in gens.values():
        if g.get("task") is not None and g.get("kind") == "coroutine":
            owned[g["task"]] += 1
    count = target.ready["count"]
    assert len(owned) == count + 1, len(owned)
    assert sorted(set(owned.values())) == [1, 5] and \
        list(owned.values()).count(1) == 1, collections.Counter(owned.values())


@pytest.mark.interpreters("3.6", "3.11-debian", "3.14t")
# (56 s of the sanitizer pass on three interpreters, 44 s of the
# release pass on 3.12 alone: the code that runs on threads is the same
# on all)
@pytest.mark.sanitizer_runs_on("3.14t")
def test_many_tasks_same_on_any_cpus(many):
    """One CPU (everything on one thread), two (the capture's copy and
    the generators on two threads), four (the JSON document's parts on
    threads of their own too): the same document.  So too when only the
    pages a first pass used are copied (the plan, tens of MB here: its
    runs copied on one thread, then on two), and when nothing is copied
    (the target read stopped).  The target has a writable mapping
    nobody can read, which every copy steps over.  On three interpreters
    (six dumps of 10,000 tasks each cost 10 to 44 s): the oldest layout,
    a stripped build and the free-threaded heap walk."""
    target, res = many
    with open("/proc/%d/maps" % target.pid) as f:
        assert any(" rw-s " in line and "(deleted)" in line
                   for line in f), "no unreadable shared mapping"
    ways = (("1", {}), ("2", {}), ("4", {}),
            ("plan-1", {"COROSCOPE_TEST_CAPTURE": "plan"}),
            ("plan-2", {"COROSCOPE_TEST_CAPTURE": "plan"}),
            ("stopped-1", {"COROSCOPE_TEST_NO_CAPTURE": "1"}))
    if TSAN:
        # Its races are on threads: the three ways with them, compared
        # with each other (a dump under it takes 4 s here).
        ways = [w for w in ways if not w[0].endswith("1")]
    docs = {}
    for name, env in ways:
        env["COROSCOPE_TEST_CPUS"] = name[-1]
        r = run_coroscope("dump", "--json", target.pid, timeout=60, env=env)
        assert r.returncode == 0, r
        stats = r.json()["stats"]
        docs[name] = without_moment(r.json())
        if name.startswith("plan"):
            # The plan's copy: large enough for two threads.
            assert stats["bytes_read"] > 10 << 20, stats
    first = ways[0][0]
    assert len(docs[first]["generators"]) > 50000, \
        len(docs[first]["generators"])
    for name, _ in ways[1:]:
        assert docs[name] == docs[first], \
            "%s: %s" % (name, first_difference(docs[first], docs[name]))


# ---------------------------------------------------------------------------
# uvloop (Debian's python3.11 with python3-uvloop): the same checks

UVLOOP_CHECKS = [
    ("target", check_target_self, ()),
    ("task-set", check_task_set, ()),
    ("task-threads", check_task_threads, ()),
] + [("scenario-" + s, check_scenario, (s,)) for s in SCENARIOS
     if s not in ("eager",)] + [
    ("generator-set", check_generator_set, ()),
    ("generators", check_generators, ()),
    ("locals", check_locals, ()),
    ("await-cycles", check_await_cycles_json, ()),
    ("main-thread", check_main_thread_runs_recorder, ()),
    ("text-tasks", check_text_tasks, ()),
    ("text-loops", check_text_loop_headers, ()),
    ("text-cycle", check_text_await_cycle, ()),
    ("text-gather", check_text_children_nested,
     ("gather-parent", "gather-child-")),
    ("dot", check_dot, ()),
]


@pytest.mark.parametrize("check,args", [(c, a) for _, c, a in UVLOOP_CHECKS],
                         ids=[n for n, _, _ in UVLOOP_CHECKS])
def test_uvloop(uv_ctx, check, args):
    check(uv_ctx, *args)


# ---------------------------------------------------------------------------
# Options

def test_format_unknown_is_usage_error():
    res = run_coroscope("dump", "--format", "yaml", os.getpid())
    assert_one_error_line(res, 2, "yaml")
