"""A thread polls an Event nobody will set (its setter failed), waking
at each timeout and doing a little work before it waits again: seen
moving at some samples, stuck at others."""
import threading

ready = threading.Event()


def wait_until_ready():
    while not ready.wait(timeout=0.4):  # MARK: poll
        sum(range(100000))


wait_until_ready()
