"""A test that hangs on an empty queue, beside its fixture's watcher
thread, which waits for the teardown to tell it to stop (copied into a
temporary directory as test_suite.py)."""

import queue
import threading

import pytest


@pytest.fixture
def watcher():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="watcher", daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_hangs(watcher):
    jobs = queue.Queue()
    jobs.get()  # MARK: watcher-suite-hangs
