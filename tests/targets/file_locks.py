"""Threads blocked taking file locks held by other processes, or by
this process's other open of the file: the lock files of a second
instance, a leftover daemon, a sibling test worker.

Usage: file_locks.py READY_FILE DIR

In DIR, each file locked first by its holder, then waited for:
- "py_flock": fcntl.flock() on a.lock, held by a Python child
  (file_lock_holder.py, asleep at its "hold" marker);
- "tool_flock": fcntl.flock() on b.lock, held by flock(1) running
  `cat`;
- "lockf": fcntl.lockf() on c.lock, held (a POSIX lock) by another
  Python child;
- "self": fcntl.flock() on d.lock through a second open of it: this
  process holds its lock through its first;
- "inherited": fcntl.flock() on f.lock, which this process locked, then
  forked a child that keeps the open file, then closed its own: the
  child holds the lock /proc/locks says this process took;
- "ofd": an OFD lock's wait (F_OFD_SETLKW, 3.9+) on g.lock, held by a
  Python child's OFD lock (no process is named in /proc/locks);
- "MainThread": subprocess.run() of a child (`python -c`) that takes
  fcntl.lockf() on e.lock, which this process holds: each waits for the
  other.

READY_FILE gets, as JSON, "pid", "tids" by thread name, "fds" (the fd
each thread waits with; "self_held": the first open of d.lock), and
"holders": per file's thread, the holder's pid and fd.  The holders
read a pipe whose write end only this process holds: they end with it.
"""

import fcntl
import json
import os
import struct
import subprocess
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

ready, where = sys.argv[1], sys.argv[2]
holder = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "file_lock_holder.py")
tids, fds, holders = {}, {}, {}


def path(name):
    return os.path.join(where, name)


def python_holder(name, how):
    """A Python child holding name's lock (how: flock or lockf): its pid
    and the fd it holds it by, once it holds it."""
    child = subprocess.Popen([sys.executable, holder, path(name), how],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = child.stdout.readline()
    return {"pid": child.pid, "fd": json.loads(line.decode())["fd"]}


# before any thread: a child that keeps f.lock's open file, and its lock
inherited = open(path("f.lock"), "w")
fcntl.flock(inherited, fcntl.LOCK_EX)
alive_r, alive_w = os.pipe()
child = os.fork()
if child == 0:
    os.close(alive_w)
    os.read(alive_r, 1)  # MARK: inherited-holder
    os._exit(0)
os.close(alive_r)
holders["inherited"] = {"pid": child, "fd": inherited.fileno()}
inherited.close()
holders["py_flock"] = python_holder("a.lock", "flock")
if hasattr(fcntl, "F_OFD_SETLKW"):
    holders["ofd"] = python_holder("g.lock", "ofd")
holders["lockf"] = python_holder("c.lock", "lockf")
tool = subprocess.Popen(["flock", path("b.lock"), "cat"],
                        stdin=subprocess.PIPE)
holders["tool_flock"] = {"pid": tool.pid}
first = open(path("d.lock"), "w")
fcntl.flock(first, fcntl.LOCK_EX)
fds["self_held"] = first.fileno()
mine = open(path("e.lock"), "w")
fcntl.lockf(mine, fcntl.LOCK_EX)
deadline = time.time() + 30
while time.time() < deadline:
    # flock(1) holds b.lock once it runs its command
    with open(path("b.lock"), "w") as probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(probe, fcntl.LOCK_UN)
        except OSError:
            break
    time.sleep(0.01)


def take(name, file, how):
    f = open(path(file), "w")
    fds[name] = f.fileno()
    tids[name] = native_tid()
    if how == "flock":
        fcntl.flock(f, fcntl.LOCK_EX)  # MARK: flock
    elif how == "ofd":
        lock = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
        fcntl.fcntl(f, fcntl.F_OFD_SETLKW, lock)  # MARK: ofd
    else:
        fcntl.lockf(f, fcntl.LOCK_EX)  # MARK: lockf


waits = [("py_flock", "a.lock", "flock"), ("tool_flock", "b.lock", "flock"),
         ("lockf", "c.lock", "lockf"), ("self", "d.lock", "flock"),
         ("inherited", "f.lock", "flock")]
if "ofd" in holders:
    waits.append(("ofd", "g.lock", "ofd"))
for name, file, how in waits:
    threading.Thread(target=take, args=(name, file, how), name=name,
                     daemon=True).start()
while len(tids) < len(waits):
    time.sleep(0.01)
tids["MainThread"] = native_tid()
time.sleep(0.2)
write_ready(ready, {"pid": os.getpid(), "tids": tids, "fds": fds,
                    "holders": holders})
child = ("import fcntl; f = open(%r, 'w'); fcntl.lockf(f, fcntl.LOCK_EX)"
         % path("e.lock"))
subprocess.run([sys.executable, "-c", child])  # MARK: deadlock
