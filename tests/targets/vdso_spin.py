"""A target that spends its time in the vDSO: time.clock_gettime() in a loop.

Usage: vdso_spin.py READY_FILE

Writes READY_FILE, then calls clock_gettime() forever, so that a stop
lands inside the vDSO's code now and then (tests/test_native.py).
"""

import json
import os
import sys
import time


def main():
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    get = time.clock_gettime
    while True:
        get(0); get(0); get(0); get(0); get(0); get(0); get(0); get(0)  # MARK: spin


main()
