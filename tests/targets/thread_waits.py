"""Threads waiting for other threads to end (tests/test_graph.py).

Usage: thread_waits.py READY SCENARIO

Scenarios:
  join   the main thread holds a Lock and joins "worker" (a Thread
         subclass), which waits for that Lock: a deadlock through a join;
         "joiner" joins "sleeper", which waits on an Event
  exit   the main thread has returned: the interpreter waits at exit for
         "forgotten" (waiting on an Event) and "forgotten-2" (on a
         Condition), not for "daemon" (asleep)
  children  "runner" in subprocess.Popen.wait(), "capturer" in
         communicate() with a pipe, the main thread in
         multiprocessing.Process.join(): each child lives until its
         parent is gone
  futures  "waiter" in concurrent.futures.wait() of a job blocked on an
         Event and a job done; "completer" iterating as_completed() over
         a job blocked on a Lock and the job done

Writes {"pid": ...} to READY once everything waits, then waits forever.
Runs on CPython 3.6 through 3.14.
"""

import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ready import write_ready  # noqa: E402

READY, SCENARIO = (sys.argv + ["", ""])[1:3]


class Worker(threading.Thread):
    def __init__(self, lock):
        threading.Thread.__init__(self, name="worker")
        self.lock = lock

    def run(self):
        with self.lock:  # MARK: worker-blocked
            pass


def join_scenario():
    lock = threading.Lock()
    never = threading.Event()
    sleeper = threading.Thread(target=never.wait, name="sleeper")
    sleeper.start()

    def joiner():
        sleeper.join()  # MARK: joiner-joins

    threading.Thread(target=joiner, name="joiner").start()
    with lock:
        worker = Worker(lock)
        worker.start()
        # worker blocks on the lock this thread holds; the ready file
        # comes from a thread of its own once the main thread joins
        threading.Thread(target=announce_later, name="announcer",
                         daemon=True).start()
        worker.join()  # MARK: main-joins


def announce_later():
    time.sleep(0.3)
    write_ready(READY, {"pid": os.getpid()})
    threading.Event().wait()


def exit_scenario():
    never = threading.Event()
    cond = threading.Condition()

    def on_cond():
        with cond:
            cond.wait()  # MARK: forgotten-2-waits

    def forgotten():
        # The ready file once the main thread is past its code: at exit,
        # threading stops the main Thread first.
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        time.sleep(0.2)
        write_ready(READY, {"pid": os.getpid()})
        never.wait()  # MARK: forgotten-waits

    threading.Thread(target=time.sleep, args=(3600,), name="daemon",
                     daemon=True).start()
    threading.Thread(target=on_cond, name="forgotten-2").start()
    threading.Thread(target=forgotten, name="forgotten").start()


def futures_scenario():
    never = threading.Event()
    held = threading.Lock()
    held.acquire()
    pool = concurrent.futures.ThreadPoolExecutor(2)
    done = pool.submit(int, 1)
    done.result()
    on_event = pool.submit(never.wait)

    def on_held():
        with held:
            pass

    on_lock = pool.submit(on_held)

    def waiter():
        concurrent.futures.wait([on_event, done])  # MARK: waiter-waits

    def completer():
        for _ in concurrent.futures.as_completed([done, on_lock]):  # MARK: completer-waits
            pass

    threading.Thread(target=waiter, name="waiter").start()
    threading.Thread(target=completer, name="completer").start()
    time.sleep(0.3)
    write_ready(READY, {"pid": os.getpid(), "done": "0x%x" % id(done)})
    never.wait()


# A child that ends once its parent has: the test kills only the target.
ORPHAN_EXITS = ("import os, time\n"
                "parent = os.getppid()\n"
                "while os.getppid() == parent:\n"
                "    time.sleep(0.1)\n")


def mp_child(target):
    """Until the target is gone or a zombie (forkserver, 3.14's default,
    is this child's parent: it would wait for the child to end)."""
    while True:
        try:
            with open("/proc/%d/stat" % target) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.1)


def children_scenario():
    pids = {}

    def runner():
        proc = subprocess.Popen([sys.executable, "-c", ORPHAN_EXITS])
        pids["runner"] = proc.pid
        proc.wait()  # MARK: runner-waits

    def capturer():
        proc = subprocess.Popen([sys.executable, "-c", ORPHAN_EXITS],
                                stdout=subprocess.PIPE)
        pids["capturer"] = proc.pid
        proc.communicate()  # MARK: capturer-waits

    def announce():
        time.sleep(0.5)
        write_ready(READY, {"pid": os.getpid(), "children": pids})
        threading.Event().wait()

    threading.Thread(target=runner, name="runner", daemon=True).start()
    threading.Thread(target=capturer, name="capturer", daemon=True).start()
    child = multiprocessing.Process(target=mp_child, args=(os.getpid(),),
                                    name="mp-child")
    child.start()
    pids["MainThread"] = child.pid
    threading.Thread(target=announce, name="announcer", daemon=True).start()
    child.join()  # MARK: main-joins-child


SCENARIOS = {"join": join_scenario, "exit": exit_scenario,
             "children": children_scenario, "futures": futures_scenario}

# (multiprocessing's forkserver and spawn import this file again, as
# __mp_main__, in the child)
if __name__ == "__main__":
    if SCENARIO not in SCENARIOS:
        sys.exit("unknown scenario %r" % SCENARIO)
    SCENARIOS[SCENARIO]()
