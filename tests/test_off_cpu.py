"""How long each thread has been off its CPU, as `dump` says it (read
before the stop: attach/offcpu.c).

targets/offcpu_target.py notes time.monotonic() just before its thread
'blocked' takes a lock forever, and when that thread last ran at the
latest (settled_at); the test reads the same clock before and after
the dump.  The kernel's figure is on the clock of the thread's
CPU, which leaves out that CPU's stolen and interrupt time: it may fall
a little short of the wall time, never beyond it.
"""

import re
import time

import pytest

from conftest import run_coroscope

BLOCKED_FOR = 1.5        # seconds the thread is blocked before the dump
SHORT_SHARE = 0.9        # the most stolen and interrupt time may take


@pytest.fixture(scope="module")
def target(interp, module_keeper):
    t = module_keeper.start_target(interp, "offcpu_target.py")
    while time.monotonic() - t.ready["settled_at"] < BLOCKED_FOR:
        time.sleep(0.05)
    return t


def test_off_cpu_as_json_and_text(target):
    tids, blocked_at = target.ready["tids"], target.ready["blocked_at"]
    settled_at = target.ready["settled_at"]
    before = time.monotonic()
    doc = run_coroscope("dump", "--json", target.pid).json()
    after = time.monotonic()
    threads = dict((t["tid"], t) for t in doc["threads"])
    off = threads[tids["blocked"]]["off_cpu_s"]
    assert off is not None and \
        (before - settled_at) * SHORT_SHARE - 0.05 <= off <= \
        after - blocked_at + 0.01, (off, before - settled_at,
                                    after - blocked_at)
    # running or runnable all along: 0
    assert threads[tids["spinner"]]["off_cpu_s"] == 0, \
        threads[tids["spinner"]]
    # The text says the same.  (The first dump's stop made every thread
    # run: the blocked one last ran at that stop now.)
    text = run_coroscope("dump", target.pid).stdout
    m = re.search(r"^Thread %d \"blocked\" \(last ran (\d+\.\d)s ago\)$"
                  % tids["blocked"], text, re.M)
    assert m and float(m.group(1)) < after - blocked_at, text
    assert re.search(r"^Thread %d \"spinner\" \(running\)"
                     % tids["spinner"], text, re.M), text
