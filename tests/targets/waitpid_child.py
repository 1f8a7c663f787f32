"""A process waiting in os.waitpid() for a child that sleeps for good
(no Popen.wait(): a bare system call the wait-for graph does not see).

Usage: waitpid_child.py READY_FILE

READY_FILE gets, as JSON, "pid" (os.getpid()) and "child" (the child's
pid as this process knows it: in its own PID namespace).
"""

import os
import subprocess
import sys

from _ready import write_ready

child = subprocess.Popen(["sleep", "3600"])
write_ready(sys.argv[1], {"pid": os.getpid(), "child": child.pid})
os.waitpid(child.pid, 0)  # MARK: waitpid
