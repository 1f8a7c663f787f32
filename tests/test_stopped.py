"""A process stopped by a signal (job control, state T) before coroscope
came: nothing of it runs until a SIGCONT.  It was shown as if it ran
("[blocked in: running]", a child "stuck" under its parent's wait) and
the stop was never said (a helper's user round).  `dump` says it under
the process's header (JSON "stopped") and leaves it stopped; `run`
makes it a cause, first, and says it under the parent's wait."""

import json
import os
import re
import signal

import pytest

from conftest import (control_interpreter, interpreter_or_skip,
                      marker_line, process_state, run_coroscope,
                      target_script, wait_main_thread_sleeping, wait_until)
from test_run import causes_after_timeout, work  # noqa: F401

STOPPED = ("stopped by a signal (job control: SIGSTOP, SIGTSTP, SIGTTIN or "
           "SIGTTOU): nothing of it runs until a SIGCONT")


def test_dump_says_the_target_is_stopped(keeper):
    target = keeper.spawn([control_interpreter().path, "-c",
                           "import time; time.sleep(600)"])
    wait_main_thread_sleeping(target.pid)
    # (SIGSTOP: it cannot be caught, ignored or blocked)
    os.kill(target.pid, signal.SIGSTOP)
    try:
        assert wait_until(lambda: process_state(target.pid) == "T", 10)
        res = run_coroscope("dump", target.pid)
        assert res.returncode == 0, res
        assert res.stdout.splitlines()[2] == (
            "Stopped by a signal (job control: SIGSTOP, SIGTSTP, SIGTTIN or "
            "SIGTTOU): none of its threads runs until a SIGCONT"), res.stdout
        doc = json.loads(run_coroscope("dump", "--json", target.pid).stdout)
        assert doc["stopped"] is True, doc
        # left as it was: stopped
        assert process_state(target.pid) == "T"
    finally:
        os.kill(target.pid, signal.SIGCONT)
    assert wait_until(lambda: process_state(target.pid) != "T", 10)
    doc = json.loads(run_coroscope("dump", "--json", target.pid).stdout)
    assert doc["stopped"] is False, doc
    assert "Stopped by a signal" not in run_coroscope("dump",
                                                      target.pid).stdout


@pytest.mark.parametrize("ident", ("3.6", "3.14t"))
def test_run_names_a_stopped_child(work, ident):
    script = target_script("child_stops.py")
    py = interpreter_or_skip(ident)
    _, causes = causes_after_timeout(["--timeout", "4", "--", py.path,
                                      script])
    m = re.match(r"  process (\d+): \S+ %s$" % re.escape(STOPPED), causes[0])
    assert m, causes
    child = m.group(1)
    assert causes[1] == ("      thread %s (MainThread) at child_stops.py:%d "
                         "in <module>" % (child, marker_line(script,
                                                             "stops"))), \
        causes
    waits = [i for i, c in enumerate(causes)
             if "waiting on subprocess.Popen" in c]
    assert len(waits) == 1 and re.search(r"\(pid %s\)$" % child,
                                         causes[waits[0]]), causes
    assert causes[waits[0] + 1].endswith(", " + STOPPED), causes
