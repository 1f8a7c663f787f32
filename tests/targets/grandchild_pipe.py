"""communicate() with a child that started a background process and
ended: the background process keeps the stdout pipe's write end open,
so the read never ends.

Usage: grandchild_pipe.py READY_FILE [both]

With "both", stderr is a pipe too (communicate() polls the two).
READY_FILE gets, as JSON, "pid" and "child" (the shell's pid).
"""

import os
import subprocess
import sys

from _ready import write_ready

both = len(sys.argv) > 2 and sys.argv[2] == "both"
proc = subprocess.Popen(["sh", "-c", "sleep 3600 & echo started"],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE if both else None)
write_ready(sys.argv[1], {"pid": os.getpid(), "child": proc.pid})
proc.communicate()  # MARK: grandchild-communicate
