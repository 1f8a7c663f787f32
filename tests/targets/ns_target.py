"""A target for the mount-namespace and deleted-library tests.

Parks its main thread at a marked line, then writes READY_FILE.
"""
import os
import sys
import time


def parked(ready_file):
    with open(ready_file + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready_file + ".tmp", ready_file)
    while True:
        time.sleep(3600)  # MARK: ns-park


parked(sys.argv[1])
