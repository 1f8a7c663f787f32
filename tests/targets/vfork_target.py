"""A target that is parked inside posix_spawn(), its child not yet exec'd.

Usage: vfork_target.py READY_FILE FIFO

Writes READY_FILE (its pid), then posix_spawn()s /bin/true with a file
action that opens FIFO for reading.  glibc runs file actions in the
vfork child, in the parent's memory, before exec: with no writer the
open blocks, so the child stays a vfork child that has not exec'd yet
(and the parent waits in posix_spawn) until a test opens FIFO to write.

Needs os.posix_spawn (Python 3.8+).
"""
import json
import os
import sys


def main():
    ready, fifo = sys.argv[1], sys.argv[2]
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid()}, f)
    os.rename(ready + ".tmp", ready)
    actions = [(os.POSIX_SPAWN_OPEN, 3, fifo, os.O_RDONLY, 0)]
    pid = os.posix_spawn("/bin/true", ["true"], dict(os.environ),
                         file_actions=actions)  # MARK: vfork-spawn
    os.waitpid(pid, 0)


main()
