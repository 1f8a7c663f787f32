"""conftest.py of pytest_parked_suite.py: a hook wrapper of the user's
own, a generator pluggy parks at its yield while the test runs, like
pytest's own."""

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield  # MARK: own-wrapper
