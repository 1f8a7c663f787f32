"""A target that makes itself non-dumpable, then parks.

Usage: nondumpable_target.py READY_FILE

prctl(PR_SET_DUMPABLE, 0): the kernel then hands its /proc files to root
and lets only CAP_SYS_PTRACE trace it, even by its own user.
"""
import ctypes
import json
import os
import sys
import time

PR_SET_DUMPABLE = 4


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        sys.exit("prctl failed: %d" % ctypes.get_errno())
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(3600)  # MARK: nondumpable-park


main()
