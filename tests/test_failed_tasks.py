"""Tasks that ended by raising and are still referenced
(targets/failed_task.py), and executors' jobs that did (targets/
failed_job.py): what they raised and where, in the dump (the text's
"Failed tasks and jobs" section, the JSON's "failed_tasks"), in a core,
and as `run`'s first cause while nothing retrieved the exception.
Before, a producer whose json.loads() raised showed only as a "closed
coroutine producer" (a job's, not at all), and `run` named the queue
its consumer waits on.

The oracle is the target's own word, written once the task failed: the
task's id(), its name, its _log_traceback, its exception's class and
args' repr(), and traceback.extract_tb() of it."""

import json
import re

import pytest

from conftest import debian_with, interpreter_or_skip, marker_line, \
    run_coroscope, target_script
from test_core import take_gcore
from test_run import work  # noqa: F401
from test_run_reads import run_target

SCRIPT = target_script("failed_task.py")


def expected_repr(info):
    """The exception's repr() as coroscope gives it: its class with its
    module (not "builtins"), its args' own reprs."""
    module, name = info["type"]
    qual = name if module in ("builtins", "__main__") else \
        "%s.%s" % (module, name)
    return "%s(%s)" % (qual, ", ".join(info["args"]))


def expected_name(info):
    """Its name: get_name() from 3.8, its coroutine's name before."""
    return info["name"] if info["name"] is not None else "producer"


def group_repr_head(info):
    """The start of a group's repr() as coroscope gives it: its class,
    its message and its first exception (anyio 3's groups: no args)."""
    if not info["args"]:
        return expected_repr(info)
    return "ExceptionGroup(%s, [%s, " % (info["args"][0],
                                         expected_repr(info["leaves"][0]))


def check_failed(doc, info):
    """The dump's JSON against the target's word."""
    failed = [t for t in doc["failed_tasks"]
              if int(t["id"], 16) == info["task"]]
    assert len(failed) == 1, doc["failed_tasks"]
    t = failed[0]
    frames = info["frames"]
    own = [f for f in frames if f[0] == SCRIPT][-1]
    assert t["name"] == expected_name(info)
    assert t["retrieved"] == info["retrieved"]
    if "leaves" in info:
        # (a group's: its repr cuts the group in it, as a list's repr
        # two deep)
        assert t["exception"].startswith(group_repr_head(info)), t
    else:
        assert t["exception"] == expected_repr(info)
    # a generator's task is one of the document's: a failed task's
    # closed coroutine names it where the task keeps it (up to 3.11)
    ids = set(x["id"] for x in doc["tasks"] + doc["failed_tasks"])
    assert all(g["task"] in ids for g in doc["generators"] if g["task"])
    for got, want in ((t["raised_at"], frames[-1]),
                      (t["raised_in_program"], own)):
        assert (got["file"], got["line"], got["function"]) == \
            tuple(want), (got, want)
    if "leaves" not in info:
        assert t["group"] is None and t["group_more"] == 0, t
    return t


# A group's exceptions kept, at most (readers/tasks.h)
GROUP_KEPT = 3


@pytest.mark.parametrize("ident,mode", (
    ("3.11-debian", "group"), ("3.14t", "group"),
    ("3.11-debian", "anyio-group")))
def test_failed_task_group_says_where_its_children_raised(ident, mode,
                                                          work):
    """A task whose TaskGroup's children raised ends with an
    ExceptionGroup (one in it, of a TaskGroup of its own): its traceback
    leads to the `async with` line and asyncio's taskgroups.py, not to
    the children's lines.  The cause, the dump and its JSON now name
    the exceptions in the group (groups in it followed) and where each
    was raised, the first three, and how many more.  Before, only the
    group and its `async with`.  The same through Debian's anyio, whose
    groups keep their exceptions in a list of their own."""
    if mode == "anyio-group":
        debian_with("anyio")
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, mode)
    pid, leaves = info["pid"], info["leaves"]
    assert len(leaves) == 4, leaves
    head = [h for h in causes if h.startswith(
        "  process %d: task '%s' failed, and nothing retrieved its "
        "exception: %s" % (pid, expected_name(info), group_repr_head(info)))]
    assert len(head) == 1, stderr[:4000]
    details = causes[head[0]]
    marker, function = ("group-with", "batch") if mode == "group" else \
        ("anyio-with", "anyio_batch")
    assert details[0].startswith("raised at %s:%d in %s (innermost "
                                 % (SCRIPT, marker_line(SCRIPT, marker),
                                    function)), details
    want = []
    for leaf in leaves[:GROUP_KEPT]:
        f = leaf["frames"][-1]
        assert f[0] == SCRIPT, leaf
        want.append("in the group: %s raised at %s:%d in %s"
                    % (expected_repr(leaf), SCRIPT, f[1], f[2]))
    assert details[1:] == want + ["and 1 more exception in the group"], \
        details
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    t = check_failed(proc, info)
    assert t["group_more"] == len(leaves) - GROUP_KEPT, t
    assert len(t["group"]) == GROUP_KEPT, t["group"]
    for got, leaf in zip(t["group"], leaves):
        assert got["exception"] == expected_repr(leaf), got
        assert got["traceback_cut"] is False, got
        for site in (got["raised_at"], got["raised_in_program"]):
            assert [site["file"], site["line"], site["function"]] == \
                leaf["frames"][-1], (site, leaf)
    # the dump's section: the group's ends, then each exception's
    text = stderr[stderr.index("Failed tasks and jobs whose exception "
                               "nothing retrieved (1):"):].splitlines()
    at = [i for i, line in enumerate(text)
          if line.startswith("  in the group: ")]
    assert [text[i] for i in at] == ["  in the group: " + expected_repr(x)
                                     for x in leaves[:GROUP_KEPT]], text
    for i, leaf in zip(at, leaves):
        f = leaf["frames"][-1]
        assert text[i + 1] == '  File "%s", line %d, in %s' % tuple(f), \
            text[i:i + 3]
    assert text[at[-1] + 3] == "  (and 1 more exception in the group)", \
        text


@pytest.mark.parametrize("ident", ("3.6", "3.8", "3.11-debian", "3.12",
                                   "3.14", "3.14t"))
def test_failed_producer_is_the_first_cause(ident, work):
    info, causes, doc, stderr = run_target(work, ident, SCRIPT)
    pid = info["pid"]
    heads = list(causes)
    assert heads[0] == (
        "  process %d: task '%s' failed, and nothing retrieved its "
        "exception: %s" % (pid, expected_name(info), expected_repr(info))
    ), stderr[:3000]
    at = info["frames"][-1]
    # (a qualname from 3.11, where code objects have one)
    assert len(causes[heads[0]]) == 1 and re.match(
        r"^raised at %s:%d in producer \(innermost %s:%d in "
        r"(JSONDecoder\.)?raw_decode\)$"
        % (re.escape(SCRIPT), marker_line(SCRIPT, "json"),
           re.escape(at[0]), at[1]), causes[heads[0]][0]), causes[heads[0]]
    # (the queue its consumer waits on comes next)
    assert "waiting on asyncio.Queue" in heads[1], heads
    kinds = [c["kind"] for c in doc["causes"] if c["pid"] == pid]
    assert kinds[:2] == ["failed_task", "held"], kinds
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    check_failed(proc, info)
    # the text report's section, the program's line then the innermost
    text = stderr[stderr.index("Failed tasks and jobs whose exception "
                               "nothing retrieved (1):"):]
    lines = text.splitlines()[1:6]
    assert lines[0].startswith("  %s 0x" % expected_name(info)) and \
        lines[0].endswith(" raised " + expected_repr(info)), lines
    assert lines[1] == '  File "%s", line %d, in producer' % (
        SCRIPT, marker_line(SCRIPT, "json")), lines
    assert lines[2].endswith("# MARK: json"), lines
    assert lines[3].startswith('  File "%s", line %d, in ' % (at[0], at[1]))


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_python_task_failure(ident, work):
    """asyncio.tasks._PyTask: its state and exception in its attributes
    (3.6: in the C future it derives from)."""
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, "pytask")
    assert list(causes)[0].startswith(
        "  process %d: task '%s' failed" % (info["pid"],
                                            expected_name(info))), \
        stderr[:3000]
    proc = [p for p in doc["processes"] if p["pid"] == info["pid"]][0]
    assert not check_failed(proc, info)["retrieved"]


@pytest.mark.parametrize("ident", ("3.6", "3.12", "3.14"))
def test_gathered_failure_is_no_cause(ident, work):
    """gather(return_exceptions=True): 3.6 asks for a child's exception
    when it ends; from 3.7 only once every child has, so that a failed
    child's exception is not retrieved yet, as the interpreter says.
    Then the gather collects it later: no cause, and the dump says
    which task awaits the gather."""
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, "retrieved")
    assert not any(" failed, and nothing retrieved" in h for h in causes), \
        stderr[:3000]
    # the others still wait on the Event nothing sets
    assert any("waiting on asyncio.Event" in h for h in causes), causes
    proc = [p for p in doc["processes"] if p["pid"] == info["pid"]][0]
    t = proc["failed_tasks"]
    assert len(t) == 1 and t[0]["raised_at"]["line"] == \
        marker_line(SCRIPT, "lost")
    assert t[0]["retrieved"] == info["retrieved"]
    assert int(t[0]["gathered_by"], 16) == info["gatherer"]
    if info["retrieved"]:
        assert "Failed tasks and jobs whose exception" not in stderr
    else:
        assert "  (a child of the gather task 0x%x awaits: it asks for " \
            "the exception once its other children end)" \
            % info["gatherer"] in stderr


@pytest.mark.parametrize("ident", ("3.8", "3.14"))
def test_unretrieved_failures_are_kept_first(ident, work):
    """100 handled failures and 6 silent ones: the silent ones are all
    read, whatever the heap walk's order (64 kept, 42 counted); run names
    the first four and counts the others."""
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, "crowd")
    failed = [h for h in causes if " failed, and nothing retrieved" in h]
    assert len(failed) == 4, stderr[:3000]
    assert causes[failed[-1]][1:] == [
        "and 2 more failed tasks or jobs whose exception nothing retrieved "
        "(the dump lists them)", "and 42 failed tasks or jobs past the 64 "
        "read"], \
        causes[failed[-1]]
    proc = [p for p in doc["processes"] if p["pid"] == info["pid"]][0]
    silent = [t for t in proc["failed_tasks"] if not t["retrieved"]]
    assert len(proc["failed_tasks"]) == 64 and len(silent) == 6
    assert proc["failed_tasks_not_read"] == 42
    check_failed(proc, info)
    assert "Failed tasks and jobs whose exception nothing retrieved " \
        "(6):" in stderr
    assert "  (and 42 more failed tasks or jobs not read)" in stderr


@pytest.mark.parametrize("ident", ("3.6", "3.14"))
def test_hostile_exception_is_escaped(ident, work):
    """Control characters and quotes in the exception's class, module
    and message, and in the task's name: escaped in the text, exact in
    the JSON."""
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, "hostile")
    for bad in ("\x1b", "\x07"):
        assert bad not in stderr
    head = list(causes)[0]
    assert "failed, and nothing retrieved its exception: " \
        "mod\\x07\\nx.Bad\\x1b[2J" in head, head
    proc = [p for p in doc["processes"] if p["pid"] == info["pid"]][0]
    check_failed(proc, info)


@pytest.mark.parametrize("ident", ("3.8", "3.14"))
def test_failed_task_in_core(ident, keeper, tmp_path):
    """The same from a core: its dump's failed_tasks are the live one's."""
    py = interpreter_or_skip(ident)
    target = keeper.start_target(py, "failed_task.py")
    live = json.loads(run_coroscope("dump", "--json", target.pid).stdout)
    core = take_gcore(target.pid, tmp_path)
    doc = json.loads(run_coroscope("core", "--json", core,
                                   py.path).stdout)
    assert doc["failed_tasks"] == live["failed_tasks"]
    check_failed(doc, target.ready)


WATCH_ARGS = ["--for", "2.5s", "--interval", "0.5s"]


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14t"))
@pytest.mark.sanitizer_runs_on("3.11-debian")
def test_watch_says_a_failure_once(ident, keeper):
    """watch: a line for the failed producer, once over its five
    samples, in run's words; none for a failure a gather will collect;
    a hostile one's escaped.  Before, watch said nothing of them."""
    py = interpreter_or_skip(ident)
    target = keeper.start_target(py, "failed_task.py")
    res = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    assert res.returncode == 0, res
    info = target.ready
    lines = [l for l in res.stdout.splitlines() if " failed " in l]
    assert len(lines) == 1, res.stdout
    assert re.match(
        r"^\d\d:\d\d:\d\d failed task '%s': %s, nothing retrieved it; "
        r"raised at %s:%d in producer \(innermost %s:%d in "
        r"(JSONDecoder\.)?raw_decode\)$"
        % (re.escape(expected_name(info)), re.escape(expected_repr(info)),
           re.escape(SCRIPT), marker_line(SCRIPT, "json"),
           re.escape(info["frames"][-1][0]), info["frames"][-1][1]),
        lines[0]), lines
    target = keeper.start_target(py, "failed_task.py", "retrieved")
    res = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    assert res.returncode == 0 and " failed " not in res.stdout, res
    target = keeper.start_target(py, "failed_task.py", "hostile")
    res = run_coroscope("watch", *(WATCH_ARGS + [target.pid]))
    lines = [l for l in res.stdout.splitlines() if " failed " in l]
    assert len(lines) == 1 and "mod\\x07\\nx.Bad\\x1b[2J" in lines[0], \
        res.stdout
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout


JOB = target_script("failed_job.py")


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14t"))
def test_failed_executor_job_is_a_cause(ident, work):
    """A ThreadPoolExecutor's job raised and nothing asked its Future for
    the result: its exception is never logged.  Before, run named only
    the queue the main thread waits on.  Jobs whose exception result()
    raised again, or that a done callback took, are no cause.  A Future
    keeps no flag of its exception taken (exception() leaves no trace):
    the job comes after the wait-for graph's causes."""
    info, causes, doc, stderr = run_target(work, ident, JOB)
    pid = info["pid"]
    heads = list(causes)
    silent = info["silent"]
    assert "waiting on queue.Queue" in heads[0], heads
    heads = heads[1:]
    first = ("  process %d: executor job producer() failed, and no result() "
             "raised its exception: %s" % (pid, expected_repr(silent)))
    assert first in heads, stderr[:3000]
    heads.remove(first)
    heads.insert(0, first)
    at = silent["frames"][-1]
    assert len(causes[heads[0]]) == 1 and re.match(
        r"^raised at %s:%d in producer \(innermost %s:%d in "
        r"(JSONDecoder\.)?raw_decode\)$"
        % (re.escape(JOB), marker_line(JOB, "json"), re.escape(at[0]),
           at[1]), causes[heads[0]][0]), causes[heads[0]]
    # one cause for the job whose result() of another raised the other's
    # exception in it, named by its own function
    assert [h for h in heads if "ValueError('nested')" in h] == [
        "  process %d: executor job inner_wait() failed, and no result() "
        "raised its exception: ValueError('nested')" % pid], heads
    assert [c["kind"] for c in doc["causes"] if c["pid"] == pid] == \
        ["held", "failed_job", "failed_job"], doc["causes"]
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    jobs = dict((int(t["id"], 16), t) for t in proc["failed_tasks"])
    for name, retrieved in (("silent", False), ("handled", True),
                            ("callback", True)):
        t = jobs[info[name]["id"]]
        assert (t["kind"], t["retrieved"], t["exception"]) == \
            ("job", retrieved, expected_repr(info[name])), t
        assert t["thread"] is None and t["loop"] is None
    assert jobs[info["handled"]["id"]]["name"] == "handled()"
    assert "Failed tasks and jobs whose exception nothing retrieved " \
        "(2):\n" in stderr
    assert "\n  executor job producer() (Future 0x%x) raised %s\n" \
        % (silent["id"], expected_repr(silent)) in stderr


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14t"))
def test_failed_pool_job_is_a_cause(ident, work):
    """The same of multiprocessing's pools: a ThreadPool's apply_async()
    job that raised and whose get() nobody called, and a process Pool's,
    whose exception comes from its child with no traceback but with the
    traceback's text, which says where (before, not known).  The pool's
    forked worker, also dumped, holds copies of them: no cause there.
    (5 s: the main thread parks on its queue only once the process pool
    started and ran its job, which took over 2.25 s, the 3 s timeout's
    last quarter, once in a sanitizer pass on 3.14t: too young to be
    judged stuck there.)"""
    info, causes, doc, stderr = run_target(work, ident, JOB, "pool",
                                           timeout="5")
    pid = info["pid"]
    # (after the wait-for graph's causes: the main thread's queue, and
    # on 3.6 a ThreadPool worker's, not told idle there)
    heads = [h for h in causes if " job " in h]
    assert any("waiting on queue.Queue" in h and "MARK: get" in d
               for h in causes for d in causes[h]), causes
    silent, child = info["silent"], info["child"]
    # (in the heap walk's order)
    first = ("  process %d: pool job producer() failed, and no get() "
             "raised its exception: %s" % (pid, expected_repr(silent)))
    second = ("  process %d: pool job crunch() failed, and no get() "
              "raised its exception: %s" % (pid, expected_repr(child)))
    assert sorted(heads[:2]) == sorted([first, second]), stderr[:3000]
    assert causes[first][0].startswith(
        "raised at %s:%d in producer (innermost " % (
            JOB, marker_line(JOB, "json")))
    # (the traceback's text its worker sent, its __cause__)
    assert causes[second] == [
        "raised at %s:%d in crunch, in its worker process (the "
        "traceback's text it sent)" % (JOB, marker_line(JOB, "crunch"))]
    kinds = [(c["pid"], c["kind"]) for c in doc["causes"]]
    assert kinds.count((pid, "failed_job")) == 2 and \
        len([k for k in kinds if k[1] == "failed_job"]) == 2, kinds
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    jobs = dict((int(t["id"], 16), t) for t in proc["failed_tasks"])
    for name, retrieved in (("silent", False), ("handled", True),
                            ("callback", True), ("child", False)):
        t = jobs[info[name]["id"]]
        assert (t["kind"], t["retrieved"], t["exception"]) == \
            ("pool_job", retrieved, expected_repr(info[name])), t
    check_worker_site(jobs[child["id"]])


def check_worker_site(job):
    """A process pool's job crunch(): where it raised, as its worker's
    traceback text says, in the JSON."""
    line = marker_line(JOB, "crunch")
    site = {"file": JOB, "line": line, "function": "crunch",
            "source": 'raise ValueError("chunk %d" % n)  # MARK: crunch',
            "in_worker_process": True}
    assert (job["name"], job["raised_at"], job["raised_in_program"],
            job["worker_raised_at"], job["worker_raised_in_program"]) == \
        ("crunch()", site, site, site, site), job


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14t"))
def test_process_job_raised_where_its_worker_says(ident, work):
    """A ProcessPoolExecutor's job raised in its worker process: no
    traceback comes back with the exception, but its text does (its
    __cause__, a _RemoteTraceback).  The cause names the job's function
    and the line it raised at; before, "where it was raised is not
    known".  A second job's file name holds a quote, ESC, BEL and a
    newline: its entry's line in the text is cut at the newline, and
    the name up to it is what is said, escaped, with no line."""
    info, causes, doc, stderr = run_target(work, ident, JOB, "procs")
    pid = info["pid"]
    child = info["child"]
    head = ("  process %d: executor job crunch() failed, and no result() "
            "raised its exception: %s" % (pid, expected_repr(child)))
    assert causes.get(head) == [
        "raised at %s:%d in crunch, in its worker process (the "
        "traceback's text it sent)" % (JOB, marker_line(JOB, "crunch"))], \
        stderr[:3000]
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    jobs = dict((int(t["id"], 16), t) for t in proc["failed_tasks"])
    check_worker_site(jobs[child["id"]])
    # (its entry's line cut at the newline: the file name so far, no
    # line or function known; the next line is no entry, nor source)
    evil = jobs[info["evil"]["id"]]
    assert (evil["name"], evil["exception"], evil["raised_at"]) == \
        (None, "KeyError(5)", {"file": 'ev"il\x1b[31m\x07', "line": None,
                               "function": None, "source": None,
                               "in_worker_process": True}), evil
    assert "\x1b" not in stderr and "\x07" not in stderr


@pytest.mark.parametrize("ident", ("3.12", "3.14t"))
def test_failed_task_group_of_many(ident, work):
    """A TaskGroup of 100 failed children: the first three, and "97
    more" (the group's items past the 64 read count too; before, 61).
    A ValueError whose `exceptions` attribute is None is no group by it,
    but its `_exceptions` list of one KeyError makes it one (before,
    an empty group)."""
    info, causes, doc, stderr = run_target(work, ident, SCRIPT, "group-many")
    pid = info["pid"]
    assert len(info["leaves"]) == 100
    head = [h for h in causes if h.startswith(
        "  process %d: task '%s' failed" % (pid, expected_name(info)))]
    assert len(head) == 1, stderr[:4000]
    assert causes[head[0]][-1] == "and 97 more exceptions in the group", \
        causes[head[0]]
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    tasks = dict((int(t["id"], 16), t) for t in proc["failed_tasks"])
    assert tasks[info["task"]]["group_more"] == 97
    odd = tasks[info["odd"]]
    assert [g["exception"] for g in odd["group"]] == ["KeyError(1)"] and \
        odd["group_more"] == 0, odd


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_task_awaiting_a_process_job_says_where_the_worker_raised(ident,
                                                                   work):
    """A task awaited run_in_executor() of a process pool's job that
    raised in its worker: the exception is raised again at the task's
    await, and its traceback has the task's frames only.  The cause
    says where the worker first raised it too (its __cause__'s text);
    so do the dump and the JSON.  Before, only the await's line."""
    info, causes, doc, stderr = run_target(work, ident, JOB, "awaited")
    pid, task = info["pid"], info["task"]
    head = [h for h in causes if h.startswith("  process %d: task '" % pid)
            and h.endswith("' failed, and nothing retrieved its exception: "
                           + expected_repr(task))]
    assert len(head) == 1, stderr[:3000]
    crunch = marker_line(JOB, "crunch")
    assert causes[head[0]] == [
        "raised at %s:%d in awaits_job" % (JOB, marker_line(JOB, "awaits-job")),
        "first raised at %s:%d in crunch, in its worker process (the "
        "traceback's text it sent)" % (JOB, crunch)], causes[head[0]]
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    t = [t for t in proc["failed_tasks"] if int(t["id"], 16) == task["id"]]
    assert len(t) == 1, proc["failed_tasks"]
    site = {"file": JOB, "line": crunch, "function": "crunch",
            "source": 'raise ValueError("chunk %d" % n)  # MARK: crunch',
            "in_worker_process": True}
    assert (t[0]["kind"], t[0]["raised_at"]["function"],
            t[0]["worker_raised_at"], t[0]["worker_raised_in_program"]) == \
        ("task", "awaits_job", site, site), t[0]
    assert '\n  first raised in its worker process:\n  File "%s", line %d, ' \
        'in crunch (in the worker process)\n' % (JOB, crunch) in stderr


@pytest.mark.parametrize("ident", ("3.8", "3.14"))
def test_gathers_of_one_repeated_future(ident, keeper):
    """gather(*[g] * 400), four deep: each gather lists its children,
    the same one 400 times; the failed children of gathers are looked
    for once per gather (a walk without memory never ended)."""
    py = interpreter_or_skip(ident)
    target = keeper.start_target(py, "failed_task.py", "fanout")
    doc = json.loads(run_coroscope("dump", "--json", target.pid).stdout)
    check_failed(doc, target.ready)
