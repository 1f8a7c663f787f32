"""A target for coroscope's greenlet tests without gevent: raw greenlets
in every state, on any CPython that has a greenlet module.

Usage: greenlet_target.py READY_FILE [DIR]

DIR, when given, is put first on sys.path (a greenlet built for this
interpreter by the test).

Three alike greenlets switch back to the main greenlet from inside a
nested call, one from a different line, one is never started, one has
finished, and a second thread parks a greenlet of its own.  The process records what it knows of each -- gr_frame's chain
(file, line, function, innermost first) and its state -- writes it to
READY_FILE as JSON (atomically) and sleeps in the main greenlet.
"""

import json
import os
import sys
import threading
import time

if len(sys.argv) > 2:
    sys.path.insert(0, sys.argv[2])

import greenlet  # noqa: E402

from _tids import native_tid  # noqa: E402
from gr_frames import frames_of  # noqa: E402

N_ALIKE = 3


def state_of(g):
    if g.dead:
        return "dead"
    if not g:
        return "not_started"
    return "suspended"


def park():
    greenlet.getcurrent().parent.switch()  # MARK: gl-park


def worker():
    park()  # MARK: gl-worker


def other():
    greenlet.getcurrent().parent.switch()  # MARK: gl-other


def finished():
    return 42


def in_thread():
    greenlet.getcurrent().parent.switch()  # MARK: gl-thread


def thread_body(box, started):
    """A second thread with a greenlet of its own, switched away from."""
    g = greenlet.greenlet(in_thread)
    g.switch()
    box.update(greenlet=g, frames=frames_of(g), tid=native_tid())
    started.set()
    time.sleep(3600)


def main(ready):
    alike = [greenlet.greenlet(worker) for _ in range(N_ALIKE)]
    for g in alike:
        g.switch()
    odd = greenlet.greenlet(other)
    odd.switch()
    fresh = greenlet.greenlet(finished)
    done = greenlet.greenlet(finished)
    done.switch()
    box, started = {}, threading.Event()
    threading.Thread(target=thread_body, args=(box, started),
                     daemon=True).start()
    started.wait()
    everyone = [(g, "alike") for g in alike] + [(odd, "other"),
                                                 (fresh, "fresh"),
                                                 (done, "done")]
    record = {"pid": os.getpid(), "version": greenlet.__version__,
              "main": id(greenlet.getcurrent()), "greenlets": []}
    for g, role in everyone:
        record["greenlets"].append({"id": id(g), "role": role,
                                    "state": state_of(g),
                                    "frames": frames_of(g)})
    record["greenlets"].append({"id": id(box["greenlet"]), "role": "thread",
                                "state": "suspended", "tid": box["tid"],
                                "frames": box["frames"]})
    record["tid"] = native_tid()
    with open(ready + ".tmp", "w") as f:
        json.dump(record, f)
    os.rename(ready + ".tmp", ready)
    time.sleep(3600)  # MARK: gl-main-sleep


if __name__ == "__main__":
    main(sys.argv[1])
