"""A target for coroscope's native-frame tests: threads blocked in C.

Usage: native_target.py READY_FILE [--abort]

One thread sleeps in time.sleep(), one waits in lock.acquire() on a lock
that is never released, one calls libc's pause() through ctypes, one
waits in os.read() on a pipe nobody writes to, and the main thread waits
in an asyncio event loop's selector.  One more thread never runs Python:
it is created by pthread_create() on libc's pause() and then sent a
signal whose C handler is pause() again, so it sits in a signal handler.
Once they are all parked a helper thread snapshots sys._current_frames()
(the ground truth for the Python frames, innermost first), writes it to
READY_FILE with each thread's kernel TID, and exits -- or, with --abort,
calls os.abort() so that the kernel writes a core.

Must run unchanged on CPython 3.6 through 3.14.
"""

import asyncio
import ctypes
import json
import os
import resource
import signal
import sys
import threading
import time

from _tids import native_tid

_tids = {}
_lock = threading.Lock()


def register(role):
    with _lock:
        _tids[threading.get_ident()] = (role, native_tid())


def sleeper(parked):
    register("sleep")
    parked.set()
    time.sleep(3600)  # MARK: sleep


def locker(held, parked):
    register("lock")
    parked.set()
    held.acquire()  # MARK: lock


def pauser(parked):
    register("pause")
    libc = ctypes.CDLL(None)
    parked.set()
    libc.pause()  # MARK: pause


def reader(fd, parked):
    register("read")
    parked.set()
    os.read(fd, 1)  # MARK: read


def snapshot(skip):
    out = {}
    for ident, frame in sys._current_frames().items():
        if ident == skip or ident not in _tids:
            continue
        frames = []
        while frame is not None:
            frames.append({"function": frame.f_code.co_name,
                           "file": frame.f_code.co_filename,
                           "line": frame.f_lineno})
            frame = frame.f_back
        role, tid = _tids[ident]
        out[role] = {"tid": tid, "frames": frames}
    return out


def start_c_thread():
    """A thread that never runs Python, parked in a signal handler."""
    libc = ctypes.CDLL(None)
    pause = ctypes.cast(libc.pause, ctypes.c_void_p)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.signal(signal.SIGUSR2, pause)
    before = set(os.listdir("/proc/self/task"))
    handle = ctypes.c_ulong()
    libc.pthread_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p]
    if libc.pthread_create(ctypes.byref(handle), None, pause, None):
        raise OSError("pthread_create failed")
    for _ in range(500):
        new = set(os.listdir("/proc/self/task")) - before
        if new:
            break
        time.sleep(0.01)
    tid = int(new.pop())
    # Once it sleeps in pause(), interrupt it into the handler.
    for _ in range(500):
        with open("/proc/self/task/%d/stat" % tid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "S":
                break
        time.sleep(0.01)
    libc.pthread_kill.argtypes = [ctypes.c_ulong, ctypes.c_int]
    libc.pthread_kill(handle, signal.SIGUSR2)
    return tid


def reporter(ready_path, c_tid, abort):
    # Let the main thread reach its selector, then record everyone.
    time.sleep(0.5)
    data = snapshot(threading.get_ident())
    data["cthread"] = {"tid": c_tid, "frames": []}
    tmp = ready_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"pid": os.getpid(), "threads": data,
                   "aborter": native_tid()}, f)
    os.rename(tmp, ready_path)
    if abort:
        time.sleep(0.3)
        os.abort()


async def main_task():
    await asyncio.sleep(3600)  # MARK: selector


def main():
    ready_path = sys.argv[1]
    abort = "--abort" in sys.argv[2:]
    if abort:
        hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    register("main")
    held = threading.Lock()
    held.acquire()
    rfd, wfd = os.pipe()
    events = []
    for target, args in ((sleeper, ()), (locker, (held,)), (pauser, ()),
                         (reader, (rfd,))):
        ev = threading.Event()
        events.append(ev)
        t = threading.Thread(target=target, args=args + (ev,), daemon=True)
        t.start()
    for ev in events:
        ev.wait()
    c_tid = start_c_thread()
    threading.Thread(target=reporter, args=(ready_path, c_tid, abort),
                     daemon=True).start()
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main_task())


if __name__ == "__main__":
    main()
