"""`run`'s causes for threads blocked taking a file's lock
(targets/file_locks.py): fcntl.flock() and fcntl.lockf() wait in the
kernel for a lock another process holds, which no object of the
waiting process shows; before, "no likely cause stands out" and the
native frames said "running".  Now a cause of kind "file_lock" names
the file, the call, the holder as /proc/locks has it and the fd it
holds it by, and where a Python holder of the run's tree is; a
process that opened the file twice waits for its own flock(); a child
waiting for a lock its parent holds while the parent waits for it to
end is a deadlock.  The pids and fds are the processes' own (os.getpid(),
fileno(), the holders' reports).  A flock() lock is its open file's:
/proc/locks names the process that took it, which may have closed the
file since (a fork kept it in the child), and an OFD lock no process at
all; the holder is the process with the open file."""

import json
import re

import pytest

from conftest import interpreter_or_skip, marker_line, target_script
from test_run import coroscope_run, likely_causes, work  # noqa: F401
from test_run_reads import causes_of

SCRIPT = target_script("file_locks.py")
HOLDER = target_script("file_lock_holder.py")
STUCK = r" \(stuck for at least [0-9.]+s\)$"


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_file_lock_waits_name_their_holder(ident, work):
    py = interpreter_or_skip(ident)
    ready, report = work / "ready.json", work / "report.json"
    res = coroscope_run(["--timeout", "3", "--report", report, "--",
                         py.path, SCRIPT, str(ready), str(work)])
    assert res.returncode == 124, res
    info = json.loads(ready.read_text())
    pid, tids, fds, holders = (info["pid"], info["tids"], info["fds"],
                               info["holders"])
    causes = causes_of(likely_causes(res.stderr), pid)
    comm = r"\(python[0-9.t]*\)"

    def cause(name, file, call, held, marker, detail):
        head = [h for h in causes if re.match(
            r'^  process %d: thread %d "%s" blocked locking fd %d, %s, '
            r'with %s\(\): held exclusively by %s%s'
            % (pid, tids[name], name, fds[name],
               re.escape(str(work / file)), call, held, STUCK), h)]
        assert len(head) == 1, (name, causes, res.stderr[:4000])
        lines = causes[head[0]]
        assert re.match(r"^at \S*file_locks\.py:%d in take: .*# MARK: %s$"
                        % (marker_line(SCRIPT, marker), marker),
                        lines[0]), lines
        assert lines[1:] == [detail] or re.match(detail, lines[1]), lines

    held = holders["py_flock"]
    cause("py_flock", "a.lock", "flock", r"process %d %s as its fd %d"
          % (held["pid"], comm, held["fd"]), "flock",
          r'^holder: process %d, thread %d( "MainThread")? at \S*'
          r'file_lock_holder\.py:%d in <module>: sys\.stdin\.read\(\)  '
          r'# MARK: hold$' % (held["pid"], held["pid"],
                              marker_line(HOLDER, "hold")))
    held = holders["lockf"]
    cause("lockf", "c.lock", "fcntl", r"process %d %s as its fd %d"
          % (held["pid"], comm, held["fd"]), "lockf",
          r'^holder: process %d, thread %d( "MainThread")? at \S*'
          r'file_lock_holder\.py:%d in ' % (held["pid"], held["pid"],
                                            marker_line(HOLDER, "hold")))
    tool = holders["tool_flock"]["pid"]
    cause("tool_flock", "b.lock", "flock", r"process %d \(flock\) as its "
          r"fd \d+" % tool, "flock", "holder: process %d: flock %s cat"
          % (tool, work / "b.lock"))
    cause("self", "d.lock", "flock", r"this process itself as fd %d"
          % fds["self_held"], "flock",
          "a flock() (or OFD) lock belongs to an open file, not to a "
          "process: this process opened the file again and waits for its "
          "own lock")
    # /proc/locks names this process, which closed the file after a
    # fork: the child that kept it holds the lock
    held = holders["inherited"]
    cause("inherited", "f.lock", "flock", r"process %d %s as its fd %d"
          % (held["pid"], comm, held["fd"]), "flock",
          r'^holder: process %d, thread %d( "MainThread")? at \S*'
          r'file_locks\.py:%d in <module>: ' % (
              held["pid"], held["pid"],
              marker_line(SCRIPT, "inherited-holder")))
    if "ofd" in holders:
        # an OFD lock's wait: /proc/locks lists it with no pid
        held = holders["ofd"]
        cause("ofd", "g.lock", "fcntl", r"process %d %s as its fd %d"
              % (held["pid"], comm, held["fd"]), "ofd",
              r'^holder: process %d, thread %d( "MainThread")? at \S*'
              r'file_lock_holder\.py:%d in ' % (
                  held["pid"], held["pid"], marker_line(HOLDER, "hold")))

    # the child waits for e.lock, held by this process, which waits for
    # the child to end
    child = [h for h in likely_causes(res.stderr) if re.match(
        r'^  process (\d+): thread \1( "MainThread")? blocked locking fd \d+, '
        r'%s, with fcntl\(\): held exclusively by process %d %s as its fd '
        r'\d+%s' % (re.escape(str(work / "e.lock")), pid, comm, STUCK), h)]
    assert len(child) == 1, res.stderr[:4000]
    cpid = int(child[0].split(":")[0].split()[1])
    detail = causes_of(likely_causes(res.stderr), cpid)[child[0]]
    assert detail[0] == "at <string>:1 in <module>", detail
    assert re.match(r'^holder: process %d, thread %d "MainThread" at \S*'
                    r'file_locks\.py:%d in <module>: .*# MARK: deadlock$'
                    % (pid, pid, marker_line(SCRIPT, "deadlock")),
                    detail[1]), detail
    assert re.match(r"^a deadlock: process %d waits for this process to "
                    r"end \(subprocess\.Popen 0x[0-9a-f]+ \(pid %d\)\)$"
                    % (pid, cpid), detail[2]), detail

    doc = json.loads(report.read_text())
    kinds = sorted((c["pid"], c["kind"]) for c in doc["causes"]
                   if " blocked locking " in c["summary"])
    waits = len(fds) - 1  # (and "self_held")
    assert kinds == sorted([(pid, "file_lock")] * waits +
                           [(cpid, "file_lock")]), doc["causes"]
    proc = [p for p in doc["processes"] if p["pid"] == pid][0]
    blocked = {t["name"]: t.get("blocked_in") for t in proc["threads"]}
    for name in [n for n in fds if n != "self_held"]:
        assert blocked[name] == "file_lock", (name, blocked)
