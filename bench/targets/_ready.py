"""Shared by the benchmark targets: announce readiness through a file.

The file is written atomically (write, then rename) so that the runner
never reads half of it.  It holds one JSON object: the target's pid,
Python version, and the number of objects the GC tracks once the target
is parked, which the runner divides by to get objects per second.
"""

import gc
import json
import os
import platform


def announce(path, **extra):
    info = {"pid": os.getpid(), "python": platform.python_version(),
            "gc_objects": len(gc.get_objects())}
    info.update(extra)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(info, f)
    os.rename(tmp, path)
