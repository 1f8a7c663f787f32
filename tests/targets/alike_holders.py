"""Alike tasks that hold locks: two transfer()s deadlocked, each holding
the lock the other waits for, and three sem_users holding one
Semaphore's slots while parked alike on an Event.

Usage: alike_holders.py READY_FILE.  Runs on 3.6+.

READY_FILE gets the pid, as JSON, once all are parked.
"""

import asyncio
import os
import sys

from _ready import write_ready


async def transfer(a, b):
    async with a:
        await asyncio.sleep(0.1)
        async with b:  # MARK: transfer
            pass


async def sem_user(sem, never):
    async with sem:
        await never.wait()  # MARK: sem-user


async def main(ready):
    accounts, ledger = asyncio.Lock(), asyncio.Lock()
    sem, never = asyncio.Semaphore(3), asyncio.Event()
    tasks = [asyncio.ensure_future(transfer(accounts, ledger)),
             asyncio.ensure_future(transfer(ledger, accounts))]
    tasks += [asyncio.ensure_future(sem_user(sem, never)) for _ in range(3)]
    await asyncio.sleep(0.5)
    write_ready(ready, {"pid": os.getpid()})
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main(sys.argv[1]))
