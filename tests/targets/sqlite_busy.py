"""A connection waiting for a SQLite database's lock another connection
holds: SQLite's busy handler sleeps and retries until the timeout (an
hour here), so the waiting thread looks asleep.

Usage: sqlite_busy.py READY_FILE MODE DIR

- thread: the main thread holds the write lock (a write transaction,
  rollback journal); thread "writer" inserts.
- wal: WAL mode; the main thread holds the write lock, then waits for
  a child process (this script, mode "insert") that inserts: a
  deadlock.
- reader: the main thread holds a read transaction open; a child
  process (mode "commit") inserts and commits, and waits for the
  reader to end with SQLite's PENDING lock held.

READY_FILE gets, as JSON, "pid" (this process), "db" (the database's
path), "waiter": the process waiting (this one or the child), and
"tid": its waiting thread's kernel id.
"""

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


def child(mode, path):
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                             "-", mode, path])
    return proc


if sys.argv[1] == "-":
    # a child: insert, or insert and commit
    (insert if sys.argv[2] == "insert" else commit)(sys.argv[3])
    sys.exit(0)

ready, mode, where = sys.argv[1], sys.argv[2], sys.argv[3]
db = os.path.join(where, "busy.db")
conn = sqlite3.connect(db, timeout=HOUR, isolation_level=None)
if mode == "wal":
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
    insert(db)


threading.Thread(target=writer, name="writer", daemon=True).start()
while "writer" not in tids:
    time.sleep(0.01)
doc.update(waiter=os.getpid(), tid=tids["writer"])
write_ready(ready, doc)
time.sleep(HOUR)  # MARK: busy-holder-sleeps
