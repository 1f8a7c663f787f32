"""`coroscope dump` against a target whose threads are parked in known places.

The target (targets/threads_target.py) records what sys._current_frames()
says from inside; coroscope, reading from outside, must report exactly the
same threads, frames, lines and (with --locals) values.  Every test runs
once per discovered interpreter.
"""

import os
import re

import pytest

from conftest import (marker_line, run_coroscope, target_script,
                      without_moment)

SCRIPT = target_script("threads_target.py")

SCALAR_TYPES = ("NoneType", "bool", "int", "float")
TEXT_TYPES = ("str", "bytes")
CONTAINER_TYPES = ("tuple", "list", "dict", "set", "frozenset")
# Items whose repr is at most this long count as "short" (contract: a small
# container of short scalar items is shown exactly as Python's repr).
SHORT_ITEM = 40
MAX_EXACT_ITEMS = 8
MAX_TEXT = 200
# threads_target.py: LONG_STR_LEN, the length of its long_text local.
LONG_TEXT_LEN = 300


# ---------------------------------------------------------------------------
# Fixtures: one target and one run of each output mode per interpreter.

@pytest.fixture(scope="module")
def target(interp, module_keeper):
    t = module_keeper.start_target(interp, "threads_target.py",
                                   parked_main=True)
    yield t
    t.proc.kill()
    t.proc.wait()


@pytest.fixture(scope="module")
def dump(target):
    return run_coroscope("dump", "--json", target.pid)


@pytest.fixture(scope="module")
def dump_locals(target):
    return run_coroscope("dump", "--json", "--locals", target.pid)


@pytest.fixture(scope="module")
def dump_text(target):
    return run_coroscope("dump", target.pid)


@pytest.fixture(scope="module")
def dump_text_locals(target):
    return run_coroscope("dump", "--locals", target.pid)


# ---------------------------------------------------------------------------
# Expectations

def recorded_workers(target):
    """{thread_id: recorded thread} for every thread but the main one."""
    main = target.ready["main_ident"]
    return dict((int(k), v) for k, v in target.ready["threads"].items()
                if int(k) != main)


def main_expected_frames(target):
    """The main thread's stack, innermost first, derived from markers."""
    f = target.ready["main_file"]
    return [(f, marker_line(SCRIPT, "main-park"), "main"),
            (f, marker_line(SCRIPT, "main-call"), "<module>")]


def frame_triples(frames):
    return [(fr["file"], fr["line"], fr["function"]) for fr in frames]


def threads_by_id(doc):
    by_id = {}
    for t in doc["threads"]:
        assert t["thread_id"] not in by_id, "thread_id listed twice: %r" % t
        by_id[t["thread_id"]] = t
    return by_id


def _short_scalar(type_name, text):
    return (type_name in SCALAR_TYPES + TEXT_TYPES) and len(text) <= SHORT_ITEM


def local_mismatch(info, got):
    """Why coroscope's repr `got` breaks the contract for a local, or None.

    info is what the target recorded with describe_value().
    """
    t = info["type"]
    if not isinstance(got, str):
        return "repr is not a string: %r" % (got,)
    if t in SCALAR_TYPES:
        want = info["repr"]
        return None if got == want else "want %s" % want
    if t in TEXT_TYPES:
        if info["len"] <= MAX_TEXT:
            want = info["repr"]
        else:
            want = "%s... (len %d)" % (info["head_repr"], info["len"])
        return None if got == want else "want %s" % want
    if t in CONTAINER_TYPES:
        if t == "dict":
            flat = all(_short_scalar(kt, kr) and _short_scalar(vt, vr)
                       for kt, kr, vt, vr in info["items"])
            item_reprs = ["%s: %s" % (kr, vr)
                          for _, kr, _, vr in info["items"]]
        else:
            flat = all(_short_scalar(it, ir) for it, ir in info["items"])
            item_reprs = [ir for _, ir in info["items"]]
        if flat and info["len"] <= MAX_EXACT_ITEMS:
            want = info["repr"]
            return None if got == want else "want %s" % want
        if flat:
            # Only the start and the length are specified.
            opening = "frozenset({" if t == "frozenset" else info["repr"][0]
            head = opening + ", ".join(item_reprs[:3])
            length = "(len %d)" % info["len"]
            if got.startswith(head) and length in got:
                return None
            return "want a repr starting %s and containing %s" % (head, length)
        # Containers of other objects: only the general shape is specified.
        if got and (got[0] == info["repr"][0] or "0x" in got):
            return None
        return "want a %s repr" % t
    # Anything else: "<TypeName object at 0x...>", hex being id(obj).
    ident = "%#x" % info["id"]
    if t in got and ident in got:
        return None
    return "want <%s object at %s>" % (t, ident)


def parse_text(text):
    """{tid: {"header", "traceback", "frames": [(file, line, func, locals)]}}."""
    blocks, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^Thread (\d+)\b(.*)$", line)
        if m:
            current = {"header": line, "traceback": False, "frames": []}
            blocks[int(m.group(1))] = current
            continue
        if current is None:
            continue
        if line.strip() == "Traceback (most recent call last):":
            current["traceback"] = True
            continue
        m = re.match(r'^\s+File "(.*)", line (\d+|\?), in (.+?)\s*$', line)
        if m:
            number = int(m.group(2)) if m.group(2).isdigit() else None
            current["frames"].append((m.group(1), number, m.group(3), {}))
            continue
        m = re.match(r"^\s+([A-Za-z_]\w*) = (.*)$", line)
        if m and current["frames"]:
            current["frames"][-1][3][m.group(1)] = m.group(2)
    return blocks


# ---------------------------------------------------------------------------
# The target itself (so a failure below is coroscope's, not the target's)

def test_target_parked_at_markers(target):
    workers = recorded_workers(target)
    names = sorted(t["name"] for t in workers.values())
    assert names == ["deep", "event-waiter", "locker", "sleeper"]
    lines = set()
    for t in workers.values():
        for fr in t["frames"]:
            if fr["file"] == target.ready["main_file"]:
                lines.add(fr["line"])
    for mark in ("sleep-method", "lock-acquire", "event-wait", "cond-wait",
                 "deep-call-2"):
        assert marker_line(SCRIPT, mark) in lines, mark


# ---------------------------------------------------------------------------
# JSON

def test_dump_json_document(dump, target, interp):
    doc = dump.json()
    assert doc["schema"] == 1
    assert doc["pid"] == target.pid
    assert isinstance(doc["command"], str)
    assert SCRIPT in doc["command"], doc["command"]
    assert doc["python"]["version"] == target.ready["version"]
    assert doc["python"]["version"] == interp.version
    assert (os.path.realpath(doc["python"]["executable"])
            == os.path.realpath(target.ready["executable"]))
    stats = doc["stats"]
    for key in ("pause_ms", "wall_ms"):
        assert isinstance(stats[key], (int, float)) and stats[key] >= 0, stats
    for key in ("reads", "bytes_read"):
        assert isinstance(stats[key], int) and stats[key] > 0, stats
    for t in doc["threads"]:
        assert isinstance(t["tid"], int)
        assert isinstance(t["thread_id"], int)
        assert t["name"] is None or isinstance(t["name"], str)
        assert t["holds_gil"] in (True, False, None)
        for fr in t["frames"]:
            assert set(fr) == {"function", "qualname", "file", "line",
                               "kind"}, fr


def test_dump_lists_exactly_the_targets_threads(dump, target):
    doc = dump.json()
    by_id = threads_by_id(doc)
    recorded = dict((int(k), v) for k, v in target.ready["threads"].items())
    assert sorted(by_id) == sorted(recorded)
    for ident, rec in recorded.items():
        got = by_id[ident]
        assert got["tid"] == rec["tid"], (rec["name"], got)
        assert got["name"] == rec["name"], got
    main = by_id[target.ready["main_ident"]]
    assert main["tid"] == target.pid
    assert main["name"] == "MainThread"


def test_dump_worker_frames_match_current_frames(dump, target):
    by_id = threads_by_id(dump.json())
    for ident, rec in recorded_workers(target).items():
        got = by_id.get(ident)
        assert got is not None, "thread %s missing" % rec["name"]
        assert frame_triples(got["frames"]) == frame_triples(rec["frames"]), \
            "thread %s" % rec["name"]
        for g, r in zip(got["frames"], rec["frames"]):
            assert g["qualname"] == r["qualname"], (rec["name"], g)
            assert g["kind"] == "function", (rec["name"], g)


def test_dump_main_thread_frames_match_markers(dump, target):
    by_id = threads_by_id(dump.json())
    main = by_id[target.ready["main_ident"]]
    assert frame_triples(main["frames"]) == main_expected_frames(target)
    assert [f["qualname"] for f in main["frames"]] == ["main", "<module>"]


def test_dump_holds_gil_idle(dump):
    # Every thread is blocked in C with the GIL released.
    for t in dump.json()["threads"]:
        assert t["holds_gil"] is False, t


def test_dump_holds_gil_spinner(interp, keeper):
    spin = keeper.start_target(interp, "threads_target.py", "--spin",
                               parked_main=True)
    doc = run_coroscope("dump", "--json", spin.pid).json()
    by_name = dict((t["name"], t) for t in doc["threads"])
    assert "spinner" in by_name, sorted(by_name)
    spinner = by_name["spinner"]
    # A free-threaded build runs with its GIL disabled: nobody holds it.
    assert spinner["holds_gil"] is (not interp.free_threaded), spinner
    assert spinner["frames"][0]["line"] == marker_line(SCRIPT, "spin")
    for name, t in by_name.items():
        if name != "spinner":
            assert t["holds_gil"] is False, t


def test_dump_native_names_the_gil_wait(interp, keeper):
    """Two threads spin in pure Python: the one without the GIL waits
    for it, and its line makes no call, so a wait under its eval loop
    can only be the GIL's.  --native must say "gil", also where the
    interpreter has no names for its own static functions (Debian's
    stripped python3: take_gil is "??"), and never "lock"."""
    if interp.free_threaded:
        pytest.skip("a free-threaded build runs with its GIL disabled: "
                    "the spinners never wait for it")
    spin = keeper.start_target(interp, "threads_target.py", "--contend",
                               parked_main=True)
    seen = []
    # Bounded: each dump catches one spinner away from the GIL almost
    # always (they trade it every 5 ms); 40 dumps to see it at least once.
    for _ in range(40):
        doc = run_coroscope("dump", "--native", "--json", spin.pid).json()
        for t in doc["threads"]:
            if not t["name"].startswith("spinner") or t["holds_gil"]:
                continue
            py = [f for f in t["frames"] if f["kind"] != "native"]
            assert py[0]["line"] == marker_line(SCRIPT, "spin"), t
            seen.append(t["blocked_in"])
        if "gil" in seen:
            break
    assert "lock" not in seen, seen
    assert "gil" in seen, seen


# ---------------------------------------------------------------------------
# --locals

def test_dump_locals_frames_unchanged(dump_locals, target):
    by_id = threads_by_id(dump_locals.json())
    for ident, rec in recorded_workers(target).items():
        got = by_id[ident]
        assert frame_triples(got["frames"]) == frame_triples(rec["frames"])
        for fr in got["frames"]:
            assert isinstance(fr.get("locals"), dict), fr


def test_dump_locals_match_target_values(dump_locals, target):
    by_id = threads_by_id(dump_locals.json())
    problems = []
    for ident, rec in recorded_workers(target).items():
        got_frames = by_id[ident]["frames"]
        for g, r in zip(got_frames, rec["frames"]):
            where = "%s %s:%s %s" % (rec["name"], os.path.basename(r["file"]),
                                     r["line"], r["function"])
            got_locals = g.get("locals", {})
            if sorted(got_locals) != sorted(r["locals"]):
                problems.append("%s: names %s, want %s" % (
                    where, sorted(got_locals), sorted(r["locals"])))
            for name, info in sorted(r["locals"].items()):
                if name not in got_locals:
                    continue
                why = local_mismatch(info, got_locals[name])
                if why:
                    problems.append("%s: %s = %r: %s" % (
                        where, name, got_locals[name], why))
    assert not problems, "\n".join(problems)


def test_dump_locals_value_types(dump_locals, target):
    """The deep frame holds one local of each kind the contract specifies."""
    by_id = threads_by_id(dump_locals.json())
    deep = [(i, r) for i, r in recorded_workers(target).items()
            if r["name"] == "deep"]
    assert len(deep) == 1
    ident, rec = deep[0]
    level3 = [f for f in by_id[ident]["frames"]
              if f["function"] == "deep_level3"]
    assert len(level3) == 1
    got = level3[0]["locals"]
    expect = {
        "none_v": "None", "true_v": "True", "false_v": "False", "zero": "0",
        "small_int": "7", "neg_int": "-42",
        "big_int": "1267650600228229401496703205376",
        "big_neg_int": "-12345678901234567890",
        "float_tenth": "0.1", "float_big": "1e+16", "float_neg": "-2.5",
        "float_inf": "inf",
        "text": repr('it\'s "quoted"\nand caf\xe9'),
        "long_text": repr("x" * 200) + "... (len %d)" % LONG_TEXT_LEN,
        "data": repr(b"\x00ab"),
        "empty_list": "[]", "one_tuple": "(5,)",
        "small_tuple": "(1, 'two', 3.0)", "small_list": "[1, 2, 3]",
        "small_dict": "{'a': 1, 'b': None}", "small_set": "{1, 2, 3}",
        "frozen": "frozenset({'x'})", "empty_set": "set()",
        "depth": "2", "label": "'shared-cell'",
    }
    wrong = dict((k, got.get(k)) for k, v in expect.items() if got.get(k) != v)
    assert not wrong, "got %r, want %r" % (wrong, dict(
        (k, expect[k]) for k in wrong))
    assert got["hundred"].startswith("[0, 1, 2"), got["hundred"]
    assert "(len 100)" in got["hundred"], got["hundred"]
    marker_id = rec["frames"][[f["function"] for f in rec["frames"]]
                              .index("deep_level3")]["locals"]["marker"]["id"]
    assert "Marker" in got["marker"] and ("%#x" % marker_id) in got["marker"]
    # Cell and free variables, dereferenced.
    frames = dict((f["function"], f) for f in by_id[ident]["frames"])
    assert frames["deep_level1"]["locals"]["cell_var"] == "'shared-cell'"
    assert frames["deep_level2"]["locals"]["cell_var"] == "'shared-cell'"


def test_dump_without_locals_has_no_locals_key(dump):
    for t in dump.json()["threads"]:
        for fr in t["frames"]:
            assert "locals" not in fr, fr


# ---------------------------------------------------------------------------
# Text

def _function_matches(shown, rec_frame):
    return shown in (rec_frame["function"], rec_frame["qualname"])


def test_dump_text(dump_text, target, interp):
    res = dump_text
    assert res.returncode == 0, res
    out = res.stdout
    first = out.splitlines()[0] if out else ""
    assert first.startswith("Process %d: " % target.pid), res
    assert "Python %s" % interp.version in out, res
    blocks = parse_text(out)
    recorded = dict((int(k), v) for k, v in target.ready["threads"].items())
    assert sorted(blocks) == sorted(r["tid"] for r in recorded.values()), res
    for ident, rec in recorded.items():
        block = blocks[rec["tid"]]
        assert '"%s"' % rec["name"] in block["header"], block["header"]
        assert block["traceback"], "no Traceback line for %s" % rec["name"]
        if ident == target.ready["main_ident"]:
            want = [{"file": f, "line": n, "function": fn, "qualname": fn}
                    for f, n, fn in main_expected_frames(target)]
        else:
            want = rec["frames"]
        shown = block["frames"]
        # Outermost first, like a Python traceback.
        want = list(reversed(want))
        assert [(f, n) for f, n, _, _ in shown] == \
            [(w["file"], w["line"]) for w in want], "thread %s" % rec["name"]
        for (_, _, func, _), w in zip(shown, want):
            assert _function_matches(func, w), (rec["name"], func, w)


def test_dump_text_marker_lines(dump_text, target):
    out = dump_text.stdout
    for mark, func in (("sleep-method", "nap"),
                       ("lock-acquire", "wait_for_lock"),
                       ("event-wait", "wait_for_event"),
                       ("cond-wait", "deep_level3"),
                       ("main-park", "main"),
                       ("main-call", "<module>")):
        line = 'File "%s", line %d, in ' % (target.ready["main_file"],
                                            marker_line(SCRIPT, mark))
        pattern = re.escape(line) + r"(\S+\.)?" + re.escape(func) + r"\s*$"
        assert re.search(pattern, out, re.M), (mark, line + func, out)


def test_dump_text_locals(dump_text_locals, target):
    res = dump_text_locals
    assert res.returncode == 0, res
    blocks = parse_text(res.stdout)
    deep = [r for r in target.ready["threads"].values()
            if r["name"] == "deep"][0]
    frames = [f for f in blocks[deep["tid"]]["frames"]
              if f[2] in ("deep_level3",)]
    assert len(frames) == 1, blocks[deep["tid"]]
    shown = frames[0][3]
    rec = [f for f in deep["frames"] if f["function"] == "deep_level3"][0]
    problems = []
    for name, info in sorted(rec["locals"].items()):
        if info["type"] in SCALAR_TYPES or (
                info["type"] in TEXT_TYPES and info["len"] <= MAX_TEXT):
            if shown.get(name) != info["repr"]:
                problems.append("%s = %r, want %s" % (
                    name, shown.get(name), info["repr"]))
    assert not problems, "\n".join(problems)


def test_dump_while_stopped_matches_captured(dump_locals, target):
    """Targets too large to copy are read while they stay stopped: that
    path must give the very same document as the copy-then-resume one."""
    stopped = run_coroscope("dump", "--json", "--locals", target.pid,
                            env={"COROSCOPE_TEST_NO_CAPTURE": "1"})
    assert stopped.returncode == 0, stopped
    a, b = without_moment(dump_locals.json()), without_moment(stopped.json())
    assert a == b
