"""A parent waiting for its child (subprocess.run()), the child stuck
on a lock its other thread holds while it waits for an Event nothing
sets.

Usage: run_child_waits.py [child].  Runs on 3.6+.
"""

import subprocess
import sys
import threading
import time


def holds(lock):
    with lock:
        threading.Event().wait()  # MARK: child-holder


if sys.argv[1:] == ["child"]:
    lock = threading.Lock()
    threading.Thread(target=holds, args=(lock,), name="holder",
                     daemon=True).start()
    time.sleep(0.2)
    with lock:  # MARK: child-waits
        pass
else:
    subprocess.run([sys.executable, __file__, "child"])  # MARK: parent
