"""A parent in subprocess.run() of a child that stops itself with
SIGSTOP (as a job-control stop would: a background job that read its
terminal gets SIGTTIN), which nothing resumes.

Usage: child_stops.py [child].  Runs on 3.6+.
"""

import os
import signal
import subprocess
import sys

if sys.argv[1:] == ["child"]:
    os.kill(os.getpid(), signal.SIGSTOP)  # MARK: stops
else:
    subprocess.run([sys.executable, __file__, "child"])  # MARK: parent
