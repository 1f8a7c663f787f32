"""A pytest-asyncio suite that hangs (tests/test_graph.py runs one test
of it at a time under `coroscope run`): a test awaiting an Event nobody
sets, and a test whose async fixture does the same."""

import asyncio

import pytest
import pytest_asyncio


@pytest.mark.asyncio
async def test_hangs():
    never = asyncio.Event()
    await never.wait()  # MARK: test-hang


@pytest_asyncio.fixture
async def stuck_fixture():
    never = asyncio.Event()
    await never.wait()  # MARK: fixture-hang
    yield


@pytest.mark.asyncio
async def test_with_stuck_fixture(stuck_fixture):
    pass
