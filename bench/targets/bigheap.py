"""Benchmark target: asyncio tasks in a process holding gigabytes.

Usage: bigheap.py READY_FILE COUNT DEPTH DATA_MIB RESERVE_MIB

COUNT tasks DEPTH coroutines deep (tasks.py's), next to DATA_MIB MiB
of bytearrays (8 MiB each, every page written) and RESERVE_MIB MiB of
writable anonymous memory that is mapped but only one page in 64 of
which is written: the caches, buffers and models a production process
holds, none of which coroscope needs to read.  The reservation fits a
machine with less memory than it names because most of it is never
touched.
"""

import asyncio
import mmap
import sys

import tasks

CHUNK = 8 << 20


def hold(data_mib, reserve_mib):
    data = []
    for _ in range(data_mib * (1 << 20) // CHUNK):
        b = bytearray(CHUNK)
        for off in range(0, CHUNK, 4096):
            b[off] = 1
        data.append(b)
    reserved = None
    if reserve_mib:
        size = reserve_mib << 20
        reserved = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        for off in range(0, size, 64 * 4096):
            reserved[off] = 1
    return data, reserved


if __name__ == "__main__":
    # Held (referenced) for as long as the target lives.
    HELD = hold(int(sys.argv[4]), int(sys.argv[5]))
    asyncio.run(tasks.main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
