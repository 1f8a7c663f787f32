"""A pytest suite for the coroscope plugin's test (tests/test_dist.py).

Run with --coroscope-timeout: two tests that hang forever, one sync and
one pytest-asyncio, with a passing test between them.
"""
import asyncio
import threading

import pytest


def test_hangs_sync():
    never = threading.Event()
    never.wait()  # MARK: sync-hang


def test_passes():
    assert sum(range(4)) == 6


async def stuck_worker(never):
    await never.wait()  # MARK: worker-hang


@pytest.mark.asyncio
async def test_hangs_async():
    never = asyncio.Event()
    worker = asyncio.get_event_loop().create_task(stuck_worker(never))
    worker.set_name("stuck-worker")
    await worker  # MARK: async-hang
