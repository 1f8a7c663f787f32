"""importlib.resources.as_file() entered at import and kept open for
good, as certifi does (so every program that imports requests): once for
a file on disk (its generator `_`), once for one in a zip (`_tempfile`;
3.9: inside `as_file`), and from 3.12 once for a directory in a zip
(`_temp_dir`, `_temp_path`).
Then a task parks on an Event, so that `run` has something stuck.

Usage: as_file_kept.py READY_FILE      (CPython 3.9+)
Writes READY_FILE (JSON: pid) once the task is parked.
"""

import asyncio
import importlib.resources
import os
import pathlib
import sys
import zipfile

from _ready import write_ready

READY = sys.argv[1]
ZIP = os.path.join(os.path.dirname(os.path.abspath(READY)), "kept_res.zip")
with zipfile.ZipFile(ZIP, "w") as z:
    z.writestr("kept_res/__init__.py", "")
    z.writestr("kept_res/data.txt", "data")
    z.writestr("kept_res/sub/more.txt", "more")
sys.path.insert(0, ZIP)

_ON_DISK = importlib.resources.as_file(pathlib.Path(__file__))
_ON_DISK_PATH = str(_ON_DISK.__enter__())
_IN_ZIP = importlib.resources.as_file(
    importlib.resources.files("kept_res") / "data.txt")
_IN_ZIP_PATH = str(_IN_ZIP.__enter__())
if sys.version_info >= (3, 12):
    _DIR_IN_ZIP = importlib.resources.as_file(
        importlib.resources.files("kept_res") / "sub")
    _DIR_IN_ZIP_PATH = str(_DIR_IN_ZIP.__enter__())


async def parked(event):
    await event.wait()  # MARK: kept-parked


async def main():
    event = asyncio.Event()
    task = asyncio.ensure_future(parked(event))
    await asyncio.sleep(0.2)
    write_ready(READY, {"pid": os.getpid(), "task": task.get_name()})
    await asyncio.sleep(3600)


asyncio.run(main())
