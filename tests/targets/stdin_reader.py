"""Reads its stdin, which never brings anything: the test holds the
pipe's write end.

Usage: stdin_reader.py READY_FILE

READY_FILE gets, as JSON, "pid".
"""

import os
import sys

from _ready import write_ready

write_ready(sys.argv[1], {"pid": os.getpid()})
sys.stdin.buffer.read(1)  # MARK: stdin-read
