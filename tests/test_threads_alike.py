"""The text report shows alike threads once: a thread pool's workers
parked on one line are one "Threads ..." entry over their one traceback,
with every thread's id, and one row of the "Waits:" section; two alike
threads stay apart; --all and --locals show each; the JSON output lists
every thread.  With --native, threads that never ran Python and wait
alike are one entry too.

targets/alike_threads.py parks POOL threads on one line, two on another,
and its main thread on a third; its ready file gives each thread's TID and
name, and expected lines come from its "# MARK:" comments.
"""

import re

import pytest

from conftest import (TIME_SCALE, marker_line, run_coroscope, target_script,
                      wait_until)

SCRIPT = target_script("alike_threads.py")
POOL = 12
GROUP = re.compile(r"^Threads (.*) \((\d+) alike\)$")
MEMBER = re.compile(r'^(\d+)(?: "((?:[^"\\]|\\.)*)")?$')


def parked_at(frames, mark):
    """Whether the innermost of frames (text lines, outermost first) in
    the target's own file is at its mark."""
    own = [f for f in frames if f.startswith('File "%s", ' % SCRIPT)]
    return bool(own) and own[-1].startswith(
        'File "%s", line %d, in ' % (SCRIPT, marker_line(SCRIPT, mark)))


@pytest.fixture(scope="module")
def target(interp, module_keeper):
    t = module_keeper.start_target(interp, "alike_threads.py", str(POOL))
    tids = dict((name, tid) for name, tid in t.ready["threads"].items())
    want = dict((tid, "pool-wait" if name.startswith("pool-") else
                 "pair-wait") for name, tid in tids.items())
    want[t.ready["main_tid"]] = "main-wait"

    def all_parked():
        # A thread is parked once its innermost own frame is at its mark
        # (it announced itself just before reaching it) and the pool's
        # threads all show the same frames, none holding the GIL (one may
        # still be on its way down threading.py).
        doc = run_coroscope("dump", "--json", t.pid).json()
        at, stacks = {}, set()
        for th in doc["threads"]:
            own = [f for f in th["frames"] if f["file"] == SCRIPT]
            if own:
                at[th["tid"]] = own[0]["line"]
            if want.get(th["tid"]) == "pool-wait":
                stacks.add((th["holds_gil"] is True, tuple(
                    (f["file"], f["line"]) for f in th["frames"])))
        return len(stacks) == 1 and not list(stacks)[0][0] and all(
            at.get(tid) == marker_line(SCRIPT, mark)
            for tid, mark in want.items())

    assert wait_until(all_parked, 20 * TIME_SCALE), \
        "the target's threads never parked"
    yield t
    t.proc.kill()
    t.proc.wait()


def blocks(text):
    """[(header line, [frame lines])] for each thread entry."""
    out = []
    for line in text.splitlines():
        if line.startswith(("Thread ", "Threads ")):
            out.append((line, []))
        elif out and line.startswith("  File "):
            out[-1][1].append(line.strip())
        elif line and not line.startswith((" ", "Traceback")):
            if out and out[-1][0] is not None:
                out.append((None, []))   # past the threads
    return [b for b in out if b[0] is not None]


def test_pool_shown_once(target):
    res = run_coroscope("dump", target.pid)
    assert res.returncode == 0, res
    assert "\x1b" not in res.stdout, res.stdout
    pool = dict((tid, name) for name, tid in target.ready["threads"].items()
                if name.startswith("pool-"))
    groups = [b for b in blocks(res.stdout) if b[0].startswith("Threads ")]
    assert len(groups) == 1, res.stdout
    header, frames = groups[0]
    m = GROUP.match(header)
    assert m and int(m.group(2)) == POOL, header
    members = [MEMBER.match(p) for p in m.group(1).split(", ")]
    assert all(members), header
    assert sorted(int(x.group(1)) for x in members) == sorted(pool), header
    named = [x for x in members if x.group(2) is not None]
    assert len(named) == 5, header
    for x in named:
        # The name escaped: "pool-3\n\x1b[31m" as pool-3\n\x1b[31m.
        assert x.group(2) == pool[int(x.group(1))].replace(
            "\n", "\\n").replace("\x1b", "\\x1b"), header
    assert parked_at(frames, "pool-wait"), frames
    # No pool thread also has an entry of its own.
    for tid in pool:
        assert not re.search(r"^Thread %d\b" % tid, res.stdout, re.M), tid


def test_pair_and_main_apart(target):
    res = run_coroscope("dump", target.pid)
    assert res.returncode == 0, res
    alone = dict((int(h.split()[1]), f) for h, f in blocks(res.stdout)
                 if h.startswith("Thread "))
    for name, tid in target.ready["threads"].items():
        if name.startswith("pair-"):
            assert tid in alone, (name, res.stdout)
            assert parked_at(alone[tid], "pair-wait"), alone[tid]
    main = target.ready["main_tid"]
    assert main in alone and parked_at(alone[main], "main-wait"), \
        res.stdout


@pytest.mark.parametrize("option", ["--all", "--locals"])
def test_each_apart(target, option):
    res = run_coroscope("dump", option, target.pid)
    assert res.returncode == 0, res
    assert not re.search(r"^Threads ", res.stdout, re.M), res.stdout
    alone = dict((int(h.split()[1]), f) for h, f in blocks(res.stdout))
    for name, tid in target.ready["threads"].items():
        if name.startswith("pool-"):
            assert parked_at(alone.get(tid, []), "pool-wait"), \
                (name, res.stdout)


WAIT_GROUP = re.compile(r"^  (\d+) threads at (\S+):(\d+) in (\S+)"
                        r"(?: \(innermost [^)]*\))?: (.*)$")
WAIT_ONE = re.compile(r"^  thread (\d+) ")
WAIT_MEMBER = re.compile(r"^(\d+)(?: \(((?:[^()\\]|\\.)*)\))?$")


def wait_rows(text):
    """[(row line, its "waits for" line)] of the Waits section."""
    lines = text.split("\nWaits:\n", 1)[1].split("\n\n", 1)[0]
    lines = lines.splitlines()
    return [(lines[i], lines[i + 1]) for i in range(0, len(lines) - 1, 2)]


@pytest.mark.parametrize("option", [None, "--all", "--locals"])
def test_waits_shown_once(target, option):
    """The pool's threads, waiting in one place for one Event, are one
    row of the Waits section naming every thread (with --all or
    --locals, a row each); the pair and the main thread, a row each."""
    res = run_coroscope("dump", *([option] if option else []), target.pid)
    assert res.returncode == 0, res
    assert "\x1b" not in res.stdout, res.stdout
    rows = wait_rows(res.stdout)
    pool = dict((tid, name) for name, tid in target.ready["threads"].items()
                if name.startswith("pool-"))
    alone = dict((int(WAIT_ONE.match(r).group(1)), (r, w))
                 for r, w in rows if WAIT_ONE.match(r))
    groups = [(WAIT_GROUP.match(r), w) for r, w in rows
              if WAIT_GROUP.match(r)]
    for r, w in rows:
        assert WAIT_ONE.match(r) or WAIT_GROUP.match(r), r
        assert w.startswith("    waits for: threading.Event 0x"), w
    apart = [t for n, t in target.ready["threads"].items()
             if n.startswith("pair-")] + [target.ready["main_tid"]]
    assert all(t in alone for t in apart), res.stdout
    if option:
        assert not groups and all(t in alone for t in pool), res.stdout
        return
    assert len(groups) == 1, res.stdout
    m = groups[0][0]
    assert int(m.group(1)) == POOL, m.group(0)
    assert (m.group(2), int(m.group(3)), m.group(4)) == (
        "alike_threads.py", marker_line(SCRIPT, "pool-wait"),
        "pool_worker"), m.group(0)
    members = [WAIT_MEMBER.match(x) for x in m.group(5).split(", ")]
    assert all(members), m.group(0)
    assert sorted(int(x.group(1)) for x in members) == sorted(pool)
    named = [x for x in members if x.group(2) is not None]
    assert len(named) == 5, m.group(0)
    for x in named:
        assert x.group(2) == pool[int(x.group(1))].replace(
            "\n", "\\n").replace("\x1b", "\\x1b"), m.group(0)
    assert not any(t in alone for t in pool), res.stdout


def test_json_lists_every_thread(target):
    doc = run_coroscope("dump", "--json", target.pid).json()
    tids = sorted(t["tid"] for t in doc["threads"])
    want = sorted(list(target.ready["threads"].values()) +
                  [target.ready["main_tid"]])
    assert tids == want, doc["threads"]


def test_native_alike_grouped(target):
    """With --native, alike threads are those whose C frames are the same
    too: the pool, each in the same futex wait under the same frames,
    becomes one entry once every thread has got there."""
    pool = sorted(tid for name, tid in target.ready["threads"].items()
                  if name.startswith("pool-"))
    seen = {}

    def pool_grouped():
        res = run_coroscope("dump", "--native", target.pid)
        assert res.returncode == 0, res
        seen["out"] = res.stdout
        for header, frames in blocks(res.stdout):
            m = GROUP.match(header.split(" [blocked in: ")[0])
            if m and sorted(int(MEMBER.match(p).group(1))
                            for p in m.group(1).split(", ")) == pool:
                seen["frames"] = frames
                return True
        return False

    assert wait_until(pool_grouped, 10 * TIME_SCALE), seen.get("out")
    assert parked_at(seen["frames"], "pool-wait"), seen["frames"]


C_GROUP = re.compile(r"^Threads ([\d, ]+) \(no Python thread state, "
                     r"(\d+) alike\) \[blocked in: wait\]$", re.M)
C_ONE = re.compile(r"^Thread (\d+) \(no Python thread state\)", re.M)


@pytest.mark.parametrize("option", [None, "--all"])
def test_native_c_threads_grouped(target, option):
    """The C threads (pthread_create() on pause(), no Python thread
    state) are one entry with every id, over the one C stack they share,
    ending in pause(); with --all, an entry each.  The JSON lists each."""
    cthreads = sorted(target.ready["cthreads"])
    res = run_coroscope("dump", "--native",
                        *([option] if option else []), target.pid)
    assert res.returncode == 0, res
    groups = C_GROUP.findall(res.stdout)
    alone = sorted(int(t) for t in C_ONE.findall(res.stdout))
    if option:
        assert not groups and alone == cthreads, res.stdout
        return
    assert len(groups) == 1 and not alone, res.stdout
    tids, count = groups[0]
    assert sorted(int(t) for t in tids.split(", ")) == cthreads, tids
    assert int(count) == len(cthreads), count
    stack = res.stdout.split(C_GROUP.search(res.stdout).group(0), 1)[1]
    stack = stack.lstrip("\n").split("\n\n", 1)[0].splitlines()
    assert stack[0] == "Native stack (most recent call last):", stack
    assert "pause" in stack[-1], stack
    doc = run_coroscope("dump", "--native", "--json", target.pid).json()
    listed = sorted(t["tid"] for t in doc["threads"]
                    if t["thread_id"] is None)
    assert listed == cthreads, listed
