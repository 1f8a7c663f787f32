"""A command that runs until told to stop, for `coroscope run`: SIGUSR1
dumps and signal forwarding.

Usage: run_sleeper.py PIDS_FILE RELEASE_FILE STATUS

Writes {"pid": ...} to PIDS_FILE, then polls for RELEASE_FILE (at most a
minute) and exits with STATUS once it appears.
"""

import json
import os
import sys
import time


def wait_for(path):
    deadline = time.monotonic() + 60
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)  # MARK: sleeper-polls


if __name__ == "__main__":
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    wait_for(sys.argv[2])
    sys.exit(int(sys.argv[3]))
