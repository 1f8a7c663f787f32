"""A target with a module named greenlet that is not one greenlet's
layout table knows: coroscope must refuse it with a warning rather than
read its objects as greenlets.

Usage: fake_greenlet.py READY_FILE VERSION

It installs a stand-in `greenlet` module (a plain class, __version__ set
to VERSION), makes one instance, writes READY_FILE and sleeps.
"""
import os
import sys
import time
import types

mod = types.ModuleType("greenlet")
mod.__version__ = sys.argv[2]


class greenlet(object):
    pass


mod.greenlet = greenlet
sys.modules["greenlet"] = mod
keep = greenlet()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(3600)  # MARK: fake-sleep
