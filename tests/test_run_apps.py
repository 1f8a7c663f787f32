"""`coroscope run` on a real web application that hangs.

A starlette app under uvicorn (Debian's packages, on Debian's python3.11)
is started under `coroscope run`; once it serves, a client asks for the
route whose handler waits forever.  When the timeout fires, the first
likely cause must be that request's handler, named at the user's line
(not uvicorn's or asyncio's), with what it waits on; the lifespan task
that waits on its queue is listed as idle, after it.
"""

import json
import os
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import (COROSCOPE, DEBIAN, TIME_SCALE, debian_with, marker_line,
                      target_script)



def wait_ready(path, proc, deadline):
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail("the app did not start under coroscope run:\n" + err[-3000:])


def test_run_names_the_stuck_handler(tmp_path):
    debian_with("uvicorn", "starlette")
    app = target_script("graph_uvicorn_app.py")
    ready = str(tmp_path / "ready.json")
    # (counted from the launch: importing uvicorn and starlette took
    # most of 6 s once in the full suite, and the request came too late;
    # once the first request was refused, after the ready file: the
    # target now listens before it, and 12 s leave more for the start.
    # A sanitizer build slows coroscope, not the app it starts: 36 s
    # there were mostly waiting; 20 leave 8 more than the release pass.)
    timeout = 12 + 4 * (TIME_SCALE - 1)
    proc = subprocess.Popen(
        [COROSCOPE, "run", "--timeout", "%gs" % timeout, "--", DEBIAN, app,
         ready], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True)
    info = wait_ready(ready, proc, time.time() + 20 * TIME_SCALE)
    # a plain handler first: anyio's worker thread then waits for work
    quick = "http://127.0.0.1:%d/quick" % info["port"]
    assert urllib.request.urlopen(quick, timeout=30).read() == b"quick"
    url = "http://127.0.0.1:%d/stuck" % info["port"]
    answered = []

    def ask():
        try:
            urllib.request.urlopen(url, timeout=60)
            answered.append(True)
        except Exception as e:      # the server is killed at the timeout
            answered.append(e)
    client = threading.Thread(target=ask, daemon=True)
    client.start()
    out, err = proc.communicate(timeout=90)
    client.join(10)
    assert proc.returncode == 124, err[-4000:]
    assert answered and answered[0] is not True, "the stuck route answered"

    lines = err.splitlines()
    head = "coroscope: likely cause, most likely first:"
    assert head in lines, err[-4000:]
    causes = lines[lines.index(head) + 1:]
    line = marker_line(app, "handler-stuck")
    # The first cause is the handler, at the user's line, with its Event.
    assert "asyncio.Event" in causes[0] and "not set" in causes[0], causes
    assert ("graph_uvicorn_app.py:%d in stuck" % line) in causes[1], causes
    # uvicorn's lifespan queue wait is ranked after it, as idle.
    idle = [c for c in causes if ": idle: " in c]
    assert idle and causes.index(idle[0]) > 0, causes
    # anyio's worker thread, idle in its queue's get(), is no cause
    # (it was one, before the stuck handler, once; then an idle one),
    # and counted idle by design in the samples, with the worker's
    # claim_worker_thread() generator
    report = causes[:[i for i, c in enumerate(causes)
                      if c.startswith("=== process ")][0]]
    assert not any(c.startswith("  process ") and "waiting on queue.Queue"
                   in c for c in report), report
    assert any("anyio's worker thread (1)" in c and "idle by design" in c
               for c in report), report
    assert not any("claim_worker_thread" in c for c in report), report
