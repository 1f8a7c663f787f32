"""Shared by test targets: the calling thread's kernel TID, on every
CPython from 3.6 on (threading.get_native_id() came in 3.8)."""

import os
import platform
import threading


def native_tid():
    if platform.machine() == "x86_64":
        try:
            import ctypes
            return int(ctypes.CDLL(None).syscall(186))  # SYS_gettid
        except (ImportError, OSError, AttributeError):
            pass
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    # /proc/thread-self -> "PID/task/TID"
    return int(os.readlink("/proc/thread-self").rsplit("/", 1)[1])
