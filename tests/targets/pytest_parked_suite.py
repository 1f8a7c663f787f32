"""A pytest suite whose one test hangs (tests/test_run_pytest.py runs it
under `coroscope run`, with pytest_parked_conftest.py as its
conftest.py).  Before it hangs, the test writes what the interpreter
itself says of its suspended generators (gc.get_objects()) to the file
named by $PARKED_READY: pytest's hook wrappers, the conftest's, the
plugins' fixtures, and the suite's own yield fixture."""

import gc
import json
import os
import threading
import types

import pytest


@pytest.fixture
def own_fixture():
    yield "set up"  # MARK: own-fixture


def suspended_generators():
    out = []
    for obj in gc.get_objects():
        if isinstance(obj, types.GeneratorType) and \
                obj.gi_frame is not None and not obj.gi_running and \
                obj.gi_frame.f_lasti >= 0:
            out.append({"qualname": obj.__qualname__,
                        "file": obj.gi_code.co_filename,
                        "line": obj.gi_frame.f_lineno})
    return out


def test_hangs(own_fixture, event_loop):
    # (event_loop: pytest-asyncio's fixture, a plugin's generator)
    ready = os.environ["PARKED_READY"]
    with open(ready + ".tmp", "w") as f:
        json.dump({"pid": os.getpid(), "generators": suspended_generators()},
                  f)
    os.rename(ready + ".tmp", ready)
    threading.Event().wait()  # MARK: test-hang
