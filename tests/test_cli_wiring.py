"""What the attach layer knows, as dump shows it: ids in the target's own
PID namespace ("ns_tid", "ns_pid"), the id that was asked for
("asked_pid"), and --retries for --no-block reads."""
import pytest

from conftest import assert_one_error_line, run_coroscope, task_ids
from test_attach_hostile import (interp_at_least, start_in_pid_namespace,
                                 start_threads_target)
from test_errors import control_interp  # noqa: F401


@pytest.mark.parametrize("mode", ["blocking", "no-block"])
def test_pid_namespace_ids_in_json_and_text(keeper, tmp_path, mode):
    """tid is the host's TID; ns_tid is what the thread itself got from
    gettid() inside its namespace (threading.get_native_id())."""
    # 3.11+ records each thread's tid, so --no-block knows it too.
    interp = interp_at_least(11)
    if interp is None:
        pytest.skip("no pyenv CPython 3.11 or later")
    host_pid, seen = start_in_pid_namespace(keeper, interp, tmp_path)
    assert seen["pid"] == 1, "the target is not pid 1 of its namespace"
    block = ["--no-block"] if mode == "no-block" else []
    res = run_coroscope(*(["dump", "--json"] + block + [host_pid]))
    doc = res.json()
    assert doc["pid"] == host_pid and doc["ns_pid"] == 1, res
    assert "asked_pid" not in doc, doc
    host_tids = set(task_ids(host_pid))
    by_ident = dict((int(k), v) for k, v in seen["threads"].items())
    assert doc["threads"], res
    for t in doc["threads"]:
        assert t["tid"] in host_tids, (t, host_tids)
        assert t["tid"] != t["ns_tid"], t
        assert t["ns_tid"] == by_ident[t["thread_id"]]["tid"], t
    text = run_coroscope(*(["dump"] + block + [host_pid]))
    assert text.returncode == 0, text
    assert text.stdout.splitlines()[0].startswith(
        "Process %d (PID 1 in its namespace): " % host_pid), text


def test_own_namespace_ids_equal_and_asked_pid(control_interp, keeper):
    target = start_threads_target(keeper, control_interp)
    doc = run_coroscope("dump", "--json", target.pid).json()
    assert doc["ns_pid"] == target.pid and "asked_pid" not in doc, doc
    assert all(t["ns_tid"] == t["tid"] for t in doc["threads"]), doc
    text = run_coroscope("dump", target.pid)
    assert text.stdout.startswith("Process %d: " % target.pid), text
    other = [t for t in task_ids(target.pid) if t != target.pid][0]
    doc = run_coroscope("dump", "--json", other).json()
    assert doc["pid"] == target.pid and doc["asked_pid"] == other, doc


@pytest.mark.parametrize("value", ["", "x", "-1", "101", "3x", "1e2",
                                   "99999999999999999999"])
def test_bad_retries_is_a_usage_error(value):
    res = run_coroscope("dump", "--no-block", "--retries", value, "1")
    assert_one_error_line(res, 2, "--retries", "0 to 100")


def test_retries_needs_no_block():
    """--retries alone would do nothing: a usage error, not silence."""
    res = run_coroscope("dump", "--retries", "2", "1")
    assert_one_error_line(res, 2, "--retries needs --no-block")


@pytest.mark.parametrize("cmd", ["dump", "core"])
def test_native_and_native_all_exclude_each_other(cmd):
    """As the synopsis says: one or the other, not the last one given."""
    for args in (["--native", "--native-all"], ["--native-all", "--native"]):
        res = run_coroscope(cmd, *(args + ["1"]))
        assert_one_error_line(res, 2, "--native and --native-all cannot be "
                              "used together")
    # the same one twice is no conflict (it fails later, on pid/core 1)
    res = run_coroscope(cmd, "--native", "--native", "1")
    assert res.returncode != 2, res


def test_retries_needs_a_value():
    res = run_coroscope("dump", "--no-block", "1", "--retries")
    assert res.returncode == 2, res
    res = run_coroscope("dump", "--no-block", "--retries")
    assert_one_error_line(res, 2, "'--retries' needs an argument")


@pytest.mark.parametrize("value", ["0", "1", "100"])
def test_good_retries_read_the_target(control_interp, keeper, value):
    target = start_threads_target(keeper, control_interp)
    res = run_coroscope("dump", "--no-block", "--retries", value, "--json",
                        target.pid)
    assert res.returncode == 0, res
    assert res.json()["pid"] == target.pid


def test_retries_zero_tries_once(control_interp, keeper):
    """With --retries 0 a read the changing target broke is not tried
    again: a failure says 1 try."""
    target = keeper.start_target(control_interp, "mutating_target.py",
                                 "{workdir}/counter.txt")
    for _ in range(20):
        res = run_coroscope("dump", "--no-block", "--retries", "0", "--json",
                            target.pid)
        assert res.returncode in (0, 8), res
        if res.returncode == 8:
            assert "(--no-block; 1 tries)" in res.stderr, res


def test_options_after_the_pid(control_interp, keeper):
    """`dump PID --json`, as py-spy and gdb users type it: options may
    follow the process id (dump and watch alike); "--" ends them, and an
    unknown one is still refused with exit status 2."""
    target = start_threads_target(keeper, control_interp)
    res = run_coroscope("dump", target.pid, "--json", "--no-source")
    assert res.returncode == 0, res
    assert res.json()["pid"] == target.pid
    res = run_coroscope("watch", target.pid, "--json", "--for", "0.3",
                        "--interval", "0.1")
    assert res.returncode == 0, res
    assert res.stdout.startswith("{"), res
    res = run_coroscope("dump", "--", target.pid, "--json")
    assert_one_error_line(res, 2, "unexpected argument '--json'")
    res = run_coroscope("dump", target.pid, "--bogus")
    assert_one_error_line(res, 2, "unknown option '--bogus'")


def test_no_block_heap_walk_met_mid_change_is_read_again(control_interp,
                                                          keeper):
    """A --no-block read that read the threads but not the heap (its
    walk met the running target's lists mid-change, as the test aid
    makes the first walk do) walks the heap again: the tasks are shown,
    without a warning.  With --retries 0 the threads are shown alone,
    with the walk's warning, as before.  (In the sanitizer
    run under load a 3 s --no-block watch once read no sample at all.)"""
    target = keeper.start_target(control_interp, "watch_target.py")
    fail_first = {"COROSCOPE_TEST_WALK_FAIL": "1"}
    res = run_coroscope("dump", "--no-block", "--json", target.pid,
                        env=fail_first)
    assert res.returncode == 0, res
    names = [t["name"] for t in res.json()["tasks"]]
    assert "parked" in names, res
    assert not [w for w in res.json()["warnings"] if "not shown" in w], res
    res = run_coroscope("dump", "--no-block", "--retries", "0", "--json",
                        target.pid, env=fail_first)
    assert res.returncode == 0, res
    assert res.json()["tasks"] == [], res
    assert res.json()["threads"], res
    # (the walk may also have met a real change first: the sanitizer's
    # slower walk does, now and then)
    assert [w for w in res.json()["warnings"]
            if w.startswith("tasks and generators not shown: ")], res
