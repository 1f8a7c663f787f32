"""A connection waiting for a SQLite database's lock another connection
holds: SQLite's busy handler sleeps and retries until the timeout (an
hour here), so the waiting thread looks asleep.

Usage: sqlite_busy.py READY_FILE MODE DIR

- thread: the main thread holds the write lock (a write transaction,
  rollback journal) and a pidfile's lock (fcntl.lockf(), the whole
  file: no database's); thread "writer" inserts.
- wal: WAL mode; the main thread holds the write lock, then waits for
  a child process (this script, mode "insert") that inserts: a
  deadlock.
- reader: the main thread holds a read transaction open; a child
  process (mode "commit") inserts and commits, and waits for the
  reader to end with SQLite's PENDING lock held.
- late: as thread, but "writer" begins its insert 2.5 s after the
  start, after a loop of short sleeps at another line.
- checkpoint: WAL mode; a child process (mode "read") holds a read
  transaction open; the main thread runs a checkpoint that waits for
  it.

READY_FILE gets, as JSON, "pid" (this process), "db" (the database's
path), "waiter": the process waiting (this one or the child), "tid":
its waiting thread's kernel id, and "reader": the child holding a read
transaction (checkpoint).
"""

import fcntl
import os
import sqlite3
import subprocess
import sys
import threading
import time

from _ready import write_ready
from _tids import native_tid

HOUR = 3600


def insert(path):
    conn = sqlite3.connect(path, timeout=HOUR)
    conn.execute("insert into t values (2)")  # MARK: busy-insert


def commit(path):
    conn = sqlite3.connect(path, timeout=HOUR)
    conn.execute("insert into t values (2)")
    conn.commit()  # MARK: busy-commit


def read(path):
    conn = sqlite3.connect(path, timeout=HOUR, isolation_level=None)
    conn.execute("begin")
    conn.execute("select * from t").fetchall()
    print("reading", flush=True)
    time.sleep(HOUR)  # MARK: busy-child-reads


def child(mode, path):
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                             "-", mode, path], stdout=subprocess.PIPE)
    return proc


if sys.argv[1] == "-":
    # a child: insert, insert and commit, or read
    {"insert": insert, "commit": commit, "read": read}[sys.argv[2]](
        sys.argv[3])
    sys.exit(0)

started = time.monotonic()
ready, mode, where = sys.argv[1], sys.argv[2], sys.argv[3]
db = os.path.join(where, "busy.db")
conn = sqlite3.connect(db, timeout=HOUR, isolation_level=None)
if mode in ("wal", "checkpoint"):
    conn.execute("pragma journal_mode=wal")
conn.execute("create table t(x)")
conn.execute("insert into t values (1)")
doc = {"pid": os.getpid(), "db": db}
if mode == "reader":
    conn.execute("begin")
    conn.execute("select * from t").fetchall()  # MARK: busy-read
    proc = child("commit", db)
    doc.update(waiter=proc.pid, tid=proc.pid)
    write_ready(ready, doc)
    time.sleep(HOUR)  # MARK: busy-reader-sleeps
if mode == "checkpoint":
    proc = child("read", db)
    proc.stdout.readline()
    doc.update(waiter=os.getpid(), tid=native_tid(), reader=proc.pid)
    write_ready(ready, doc)
    conn.execute("pragma wal_checkpoint(truncate)")  # MARK: busy-checkpoint
conn.execute("begin immediate")
conn.execute("insert into t values (3)")  # MARK: busy-takes
if mode == "wal":
    proc = child("insert", db)
    doc.update(waiter=proc.pid, tid=proc.pid)
    write_ready(ready, doc)
    proc.wait()  # MARK: busy-waits-child
tids = {}


def writer():
    tids["writer"] = native_tid()
    if mode == "late":
        # work at another line first: the wait begins 2.5 s in
        while time.monotonic() < started + 2.5:
            time.sleep(0.05)  # MARK: busy-late-work
    insert(db)


pidfile = open(os.path.join(where, "app.pid"), "w")
fcntl.lockf(pidfile, fcntl.LOCK_EX)
threading.Thread(target=writer, name="writer", daemon=True).start()
while "writer" not in tids:
    time.sleep(0.01)
doc.update(waiter=os.getpid(), tid=tids["writer"])
write_ready(ready, doc)
time.sleep(HOUR)  # MARK: busy-holder-sleeps
