"""A main script run by a relative name (`python relative_main.py`): before
3.9 its code's co_filename stays "relative_main.py", and coroscope finds
its source lines in the process's current directory, as the
interpreter's own traceback would.

Usage: relative_main.py READY_FILE [DIR]: with DIR, change into it
before parking (the name then resolves in DIR, as it would for the
interpreter's traceback).

Must run unchanged on CPython 3.6 through 3.14.
"""

import json
import os
import sys
import time


def park(ready):
    # Self-contained (the test runs a copy of it from its own directory):
    # the ready file written atomically, as _ready.write_ready() does.
    with open(ready + ".tmp", "w") as f:
        json.dump({"cwd": os.getcwd()}, f)
    os.rename(ready + ".tmp", ready)
    while True:
        time.sleep(60)  # MARK: park


if __name__ == "__main__":
    if len(sys.argv) > 2:
        os.chdir(sys.argv[2])
    park(os.path.abspath(sys.argv[1]))
