"""A process holding a file's lock (file_locks.py's child).

Usage: file_lock_holder.py FILE flock|lockf|ofd

Prints {"fd": N} (the fd it holds the lock by) once it holds it, then
reads its stdin at its "hold" marker: it ends when the process holding
the pipe's write end (file_locks.py) does.
"""

import fcntl
import json
import struct
import sys

f = open(sys.argv[1], "w")
if sys.argv[2] == "flock":
    fcntl.flock(f, fcntl.LOCK_EX)
elif sys.argv[2] == "ofd":
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD)
    fcntl.fcntl(f, fcntl.F_OFD_SETLK,
                struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
else:
    fcntl.lockf(f, fcntl.LOCK_EX)
sys.stdout.write(json.dumps({"fd": f.fileno()}) + "\n")
sys.stdout.flush()
sys.stdin.read()  # MARK: hold
