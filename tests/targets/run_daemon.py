"""A hanging command for `coroscope run` whose grandchild escapes: the
child forks again, calls setsid() and exits, so the grandchild is an
orphan in a session of its own (neither in the command's process group
nor below a living process of the command).

Usage: run_daemon.py PIDS_FILE

Writes {"pid": ..., "daemon": ...} to PIDS_FILE once the daemon runs,
then sleeps; the daemon sleeps too.
"""

import json
import os
import sys
import time


def daemon_sleeps():
    while True:
        time.sleep(100)  # MARK: daemon-sleeps


def spawn_daemon():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.setsid()
        if os.fork() == 0:
            os.write(w, str(os.getpid()).encode())
            os.close(w)
            daemon_sleeps()
        os._exit(0)
    os.close(w)
    daemon = int(os.read(r, 64).decode())
    os.close(r)
    os.waitpid(pid, 0)
    return daemon


if __name__ == "__main__":
    daemon = spawn_daemon()
    with open(sys.argv[1] + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "daemon": daemon}, f)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(100)  # MARK: parent-sleeps
