"""Threads whose names and functions' names are Markdown and UTF-8
traps for run's step summary (GITHUB_STEP_SUMMARY), all parked on one
event until run's timeout.

Usage: md_names.py READY_FILE.  Each name is in NAMES below; the ready
file holds the thread names as started.

Must run unchanged on CPython 3.6 through 3.14.
"""

import sys
import threading

from _ready import write_ready

NAMES = {
    # cut at 60 bytes for a thread name: inside the 20th euro sign
    "long": "x" + "\u20ac" * 300,
    # entities a renderer would decode, strike-through, GitHub's math
    "markup": "&lt;script&gt; ~~s~~ $x$",
    # backticks, which a code span can only hold inside a longer fence
    "ticks": "tick`two``three",
    # what GitHub's renderer would make links of
    "links": "http://evil.example/a www.evil.example",
}

event = threading.Event()


def parked():
    event.wait()  # MARK: md-parked


def named(name):
    f = lambda: parked()  # noqa: E731
    f.__name__ = f.__qualname__ = name
    return f


if __name__ == "__main__":
    threads = [threading.Thread(target=named(n), name=n, daemon=True)
               for n in NAMES.values()]
    for t in threads:
        t.start()
    write_ready(sys.argv[1], {"names": [t.name for t in threads]})
    event.wait()
