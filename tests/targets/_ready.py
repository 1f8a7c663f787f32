"""Shared by test targets: the ready file, written so that a test polling
for it never reads half of it (on every CPython from 3.6 on)."""

import json
import os


def write_ready(path, doc):
    """JSON doc into path, atomically (a rename over it)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.rename(tmp, path)
