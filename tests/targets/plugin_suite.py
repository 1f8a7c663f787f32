"""A pytest suite for the coroscope plugin's test (tests/test_dist.py).

Run with --coroscope-timeout=3: two tests that hang forever, one sync and
one pytest-asyncio, with a passing test between them, and a slow test
whose marker lifts the timeout.
"""
import asyncio
import threading
import time

import pytest


def test_hangs_sync():
    never = threading.Event()
    never.wait()  # MARK: sync-hang


def test_passes():
    assert sum(range(4)) == 6


@pytest.mark.coroscope_timeout(0)
def test_slow_without_timeout():
    time.sleep(3.5)


async def stuck_worker(never):
    await never.wait()  # MARK: worker-hang


@pytest.mark.asyncio
async def test_hangs_async():
    never = asyncio.Event()
    worker = asyncio.get_event_loop().create_task(stuck_worker(never))
    worker.set_name("stuck-worker")
    await worker  # MARK: async-hang
