"""A suite run under pytest-xdist (`pytest -n 2`) of which one test hangs
for good, the other passes.

test_hangs takes a lock it already holds (a self-deadlock); test_passes
returns at once.  With XDIST_READY set, the hanging test writes there,
as JSON, "pid": its worker's pid, before it hangs.
"""

import json
import os
import threading


def test_passes():
    assert True


def test_hangs():
    lock = threading.Lock()
    lock.acquire()
    ready = os.environ.get("XDIST_READY")
    if ready:
        with open(ready + ".tmp", "w") as f:
            json.dump({"pid": os.getpid()}, f)
        os.rename(ready + ".tmp", ready)
    lock.acquire()  # MARK: xdist-hang
