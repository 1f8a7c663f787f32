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
         communicate() with a pipe, "reaped" in communicate() of a child
         reaped whose own child keeps the pipe open, the main thread in
         multiprocessing.Process.join(): each child lives until its
         parent is gone
  achildren  task "aio-waiter" in asyncio's Process.wait(), task
         "aio-capturer" in its communicate() with a pipe
  pool   "mapper" in a process Pool's map(), "applier" in its
         apply_async().get(), "thread-mapper" in a ThreadPool's map(); the
         jobs never end (a process's until the target is gone)
  queues  "q-joiner" in queue.Queue.join() (two items put, one taken,
         none marked done), task "aq-joiner" in asyncio.Queue.join()
         (one put and taken, not marked done)
  futures  "waiter" in concurrent.futures.wait() of a job blocked on an
         Event and a job done; "completer" iterating as_completed() over
         a job blocked on a Lock and the job done; "first" waiting for
         the first of the two blocked jobs; "by-dict" in wait() of a
         dict of the Event's job and the job done
  released  "holder" waits on an Event inside `with held:`; "releaser"
         inside `with given_up:` has released given_up and waits on the
         Event: it holds nothing
  import  "importer" imports slow_import.py, whose import never ends;
         "second" imports it too and waits for importlib's lock on it

Writes {"pid": ...} to READY once everything waits, then waits forever.
Runs on CPython 3.6 through 3.14.
"""

import asyncio
import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import threading
import time

# (CPython drops __main__'s __file__ once the script's code has run: the
# exit scenario reads it after that)
THIS_FILE = __file__
sys.path.insert(0, os.path.dirname(os.path.abspath(THIS_FILE)))
from _ready import class_name, write_ready  # noqa: E402

READY, SCENARIO = (sys.argv + ["", ""])[1:3]


def marker(name):
    """The line of "# MARK: name" in this file."""
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# MARK: " + name):
                return number
    raise LookupError(name)


def settle(marks):
    """Until each thread named in marks ({name: marker}) has a frame of
    this file at that marker's line (it waits there: the wait itself is
    in C or in threading.py), then a moment more: on a loaded host a
    fixed sleep may not be enough for a thread to get there."""
    lines = dict((name, marker(m)) for name, m in marks.items())
    while True:
        idents = dict((t.name, t.ident) for t in threading.enumerate())
        frames = sys._current_frames()
        left = []
        for name, line in lines.items():
            f = frames.get(idents.get(name))
            while f is not None and not (f.f_lineno == line and
                                         f.f_code.co_filename == THIS_FILE):
                f = f.f_back
            if f is None:
                left.append(name)
        if not left:
            break
        time.sleep(0.01)
    time.sleep(0.1)


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
    settle({"MainThread": "main-joins", "worker": "worker-blocked",
            "joiner": "joiner-joins"})
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
        settle({"forgotten-2": "forgotten-2-waits"})
        write_ready(READY, {"pid": os.getpid()})
        never.wait()  # MARK: forgotten-waits

    threading.Thread(target=time.sleep, args=(3600,), name="daemon",
                     daemon=True).start()
    threading.Thread(target=on_cond, name="forgotten-2").start()
    threading.Thread(target=forgotten, name="forgotten").start()


def on_held_lock(lock, started):
    started.release()
    with lock:  # MARK: job-takes
        pass


KEPT = []


def running_jobs(lock, n):
    """n jobs on lock, each running (in its worker) once this returns.
    An executor of their own, of n workers: a shared one may have its
    workers all busy while it counts one idle (seen on 3.14t: a job
    queued with no worker left to run it, and the target hung)."""
    pool = concurrent.futures.ThreadPoolExecutor(n)
    KEPT.append(pool)
    started = threading.Semaphore(0)
    fs = [pool.submit(on_held_lock, lock, started) for _ in range(n)]
    for _ in range(n):
        started.acquire()
    return fs


def futures_scenario():
    never = threading.Event()
    held = threading.Lock()
    held.acquire()
    pool = concurrent.futures.ThreadPoolExecutor(5)
    mine, mine2 = threading.Lock(), threading.Lock()
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

    def first():
        # the first of a job on the Event and one on the lock it holds
        with mine:
            fs = [on_event] + running_jobs(mine, 1)
            how = concurrent.futures.FIRST_COMPLETED
            concurrent.futures.wait(fs, return_when=how)  # MARK: first-waits

    def first_both():
        # the first of two jobs on the lock it holds: a deadlock
        with mine2:
            fs = running_jobs(mine2, 2)
            how = concurrent.futures.FIRST_COMPLETED
            concurrent.futures.wait(fs, return_when=how)  # MARK: both-waits

    def by_dict():
        concurrent.futures.wait({on_event: "e", done: "d"})  # MARK: dict-waits

    for target, name in ((waiter, "waiter"), (completer, "completer"),
                         (first, "first"), (first_both, "first-both"),
                         (by_dict, "by-dict")):
        threading.Thread(target=target, name=name).start()
    settle({"waiter": "waiter-waits", "completer": "completer-waits",
            "first": "first-waits", "first-both": "both-waits",
            "by-dict": "dict-waits"})
    write_ready(READY, {"pid": os.getpid(), "done": "0x%x" % id(done)})
    never.wait()


QUEUED = {}


def submits_and_waits(pool, name, parked, running):
    """A job that submits another to its own pool and waits for it, once
    the pool's other jobs of this kind run too (so that no worker is
    free to take the job it submits)."""
    running.wait()
    QUEUED[name] = inner = pool.submit(int, 1)
    parked.release()
    inner.result()  # MARK: starved-waits


def starved_scenario():
    """Jobs waiting for jobs queued behind them in their own pool: in
    "one" (one worker) the job's own; in "two" both workers wait, each
    for a job only the other could run, were it free: deadlocks.  In
    "free" the other worker sleeps: it will be free one day."""
    parked = threading.Semaphore(0)
    pools = {}
    for prefix, n in (("one", 1), ("two", 2), ("free", 2), ("xa", 2),
                      ("xb", 2)):
        pools[prefix] = concurrent.futures.ThreadPoolExecutor(
            n, thread_name_prefix=prefix)
    KEPT.extend(pools.values())
    started = threading.Semaphore(0)
    pools["free"].submit(lambda: (started.release(), time.sleep(3600)))
    started.acquire()  # (the sleeper has the first worker)
    both = threading.Barrier(2)
    for prefix, name, running in (
            ("one", "one", threading.Barrier(1)), ("two", "two-a", both),
            ("two", "two-b", both), ("free", "free", threading.Barrier(1))):
        pools[prefix].submit(submits_and_waits, pools[prefix], name, parked,
                             running)
    # "xa" and "xb": each worker's job waits for a job it queued in the
    # other pool, whose workers all do the same: a deadlock of both
    four = threading.Barrier(4)
    for mine, other in (("xa", "xb"), ("xb", "xa")):
        for k in range(2):
            pools[mine].submit(submits_and_waits, pools[other],
                               "%s-%d" % (mine, k), parked, four)
    for _ in range(8):
        parked.acquire()
    settle(dict((name, "starved-waits") for name in (
        "one_0", "two_0", "two_1", "free_1", "xa_0", "xa_1", "xb_0",
        "xb_1")))
    write_ready(READY, {"pid": os.getpid(),
                        "queued": dict((name, "0x%x" % id(f))
                                       for name, f in QUEUED.items())})
    threading.Event().wait()


def mixed_scenario():
    """A deadlock half in C: "c-then-py" holds a pthread mutex (through
    ctypes, which no Python object stands for) and waits for a Lock that
    "py-then-c" holds, which waits for the mutex."""
    import ctypes
    libc = ctypes.CDLL(None)
    mutex = ctypes.create_string_buffer(64)  # zeroed: a plain mutex
    lock = threading.Lock()
    both = threading.Barrier(2)

    def py_then_c():
        with lock:
            both.wait()
            libc.pthread_mutex_lock(mutex)  # MARK: mixed-c-waits

    def c_then_py():
        libc.pthread_mutex_lock(mutex)
        both.wait()
        with lock:  # MARK: mixed-py-waits
            pass

    for target, name in ((py_then_c, "py-then-c"), (c_then_py, "c-then-py")):
        threading.Thread(target=target, name=name, daemon=True).start()
    settle({"py-then-c": "mixed-c-waits", "c-then-py": "mixed-py-waits"})
    write_ready(READY, {"pid": os.getpid()})
    threading.Event().wait()


def announce_rlock_loop():
    settle({"MainThread": "rloop-blocked", "other": "rloop-other"})
    write_ready(READY, {"pid": os.getpid()})


def rlock_loop_scenario():
    """A task holds an RLock across an await (its owner the loop's
    thread); the loop's thread is blocked in another task's step on a
    Lock that thread "other" holds, which waits for the RLock: a cycle
    through the loop's thread."""
    rlock, lock = threading.RLock(), threading.Lock()
    taken = threading.Event()

    def other():
        with lock:
            taken.set()
            time.sleep(0.3)
            with rlock:  # MARK: rloop-other
                pass

    async def holder():
        with rlock:
            await asyncio.sleep(3600)

    async def blocker():
        await asyncio.sleep(0.1)
        threading.Thread(target=other, name="other", daemon=True).start()
        taken.wait()
        threading.Thread(target=announce_rlock_loop, daemon=True).start()
        with lock:  # MARK: rloop-blocked
            pass

    async def main():
        await asyncio.gather(holder(), blocker())

    asyncio.new_event_loop().run_until_complete(main())


# A child that ends once its parent has: the test kills only the target.
ORPHAN_EXITS = ("import os, time\n"
                "parent = os.getppid()\n"
                "while os.getppid() == parent:\n"
                "    time.sleep(0.1)\n")


# A process that ends once the target is gone or a zombie (%d: its
# pid), whoever its parent is.
WATCH_TARGET = ("import time\n"
                "while True:\n"
                "    try:\n"
                "        stat = open('/proc/%d/stat').read()\n"
                "    except OSError:\n"
                "        break\n"
                "    if stat.rsplit(')', 1)[1].split()[0] == 'Z':\n"
                "        break\n"
                "    time.sleep(0.1)\n")


def mp_child(target):
    """(forkserver, 3.14's default, is this child's parent: it would wait
    for the child to end)"""
    exec(WATCH_TARGET % target)


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

    def reaped():
        # the child exits at once; its child keeps the pipe open
        proc = subprocess.Popen(
            [sys.executable, "-c", "import subprocess, sys; "
             "subprocess.Popen([sys.executable, '-c', sys.argv[1]])",
             WATCH_TARGET % os.getpid()], stdout=subprocess.PIPE)
        pids["reaped"] = proc.pid
        proc.wait()
        proc.communicate()  # MARK: reaped-waits

    def announce():
        # every child started (a fork can take long on a loaded host),
        # then the moment from there to the wait
        settle({"runner": "runner-waits", "capturer": "capturer-waits",
                "reaped": "reaped-waits", "MainThread": "main-joins-child"})
        write_ready(READY, {"pid": os.getpid(), "children": pids})
        threading.Event().wait()

    # The fork first: forked while a thread spawns, it would keep that
    # Popen's pipe from its exec'ing child open, and the Popen would
    # wait for it forever.
    child = multiprocessing.Process(target=mp_child, args=(os.getpid(),),
                                    name="mp-child")
    child.start()
    pids["MainThread"] = child.pid
    threading.Thread(target=runner, name="runner", daemon=True).start()
    threading.Thread(target=capturer, name="capturer", daemon=True).start()
    threading.Thread(target=reaped, name="reaped", daemon=True).start()
    threading.Thread(target=announce, name="announcer", daemon=True).start()
    child.join()  # MARK: main-joins-child


def achildren_scenario():
    pids = {}

    async def aio_waiter():
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ORPHAN_EXITS)
        pids["aio-waiter"] = proc.pid
        await proc.wait()  # MARK: aio-waiter-waits

    async def aio_capturer():
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", ORPHAN_EXITS, stdout=subprocess.PIPE)
        pids["aio-capturer"] = proc.pid
        await proc.communicate()  # MARK: aio-capturer-waits

    async def main():
        tasks = [loop.create_task(aio_waiter()),
                 loop.create_task(aio_capturer())]
        if hasattr(tasks[0], "set_name"):
            tasks[0].set_name("aio-waiter")
            tasks[1].set_name("aio-capturer")
        while len(pids) < 2:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        write_ready(READY, {"pid": os.getpid(), "children": pids})
        await asyncio.gather(*tasks)

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    if sys.version_info < (3, 8):
        # (the child watcher of 3.6 and 3.7 needs the loop attached)
        asyncio.get_child_watcher().attach_loop(loop)
    loop.run_until_complete(main())


def pool_block(target):
    exec(WATCH_TARGET % target)


def pool_scenario():
    import multiprocessing.pool
    me = os.getpid()
    # the processes first (a fork while threads run), then the threads
    pool = multiprocessing.Pool(2)
    workers = [p.pid for p in pool._pool]
    never = threading.Event()
    tpool = multiprocessing.pool.ThreadPool(2)

    def mapper():
        pool.map(pool_block, [me, me])  # MARK: mapper-waits

    def applier():
        pool.apply_async(pool_block, (me,)).get()  # MARK: applier-waits

    arrived = threading.Semaphore(0)

    def thread_job(_):
        arrived.release()
        never.wait()

    def thread_mapper():
        tpool.map(thread_job, [1, 2])  # MARK: thread-mapper-waits

    for target, name in ((mapper, "mapper"), (applier, "applier"),
                         (thread_mapper, "thread-mapper")):
        threading.Thread(target=target, name=name, daemon=True).start()
    # both ThreadPool workers in their job (a worker's thread is only
    # linked while it runs the job)
    arrived.acquire()
    arrived.acquire()
    settle({"mapper": "mapper-waits", "applier": "applier-waits",
            "thread-mapper": "thread-mapper-waits"})
    write_ready(READY, {"pid": me, "workers": workers,
                        "worker_class": class_name(pool._pool[0],
                                                   multiprocessing),
                        "thread_workers": [t.ident for t in tpool._pool]})
    never.wait()


def queues_scenario():
    import queue
    q = queue.Queue()
    q.put(1)
    q.put(2)
    q.get()

    def q_joiner():
        q.join()  # MARK: q-joiner-waits

    async def aq_joiner(aq):
        await aq.join()  # MARK: aq-joiner-waits

    async def main():
        aq = asyncio.Queue()
        aq.put_nowait(1)
        aq.get_nowait()
        task = loop.create_task(aq_joiner(aq))
        await asyncio.sleep(0.1)
        settle({"q-joiner": "q-joiner-waits"})
        write_ready(READY, {"pid": os.getpid()})
        await task

    threading.Thread(target=q_joiner, name="q-joiner").start()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main())


def released_scenario():
    held, given_up = threading.Lock(), threading.Lock()
    never = threading.Event()

    def holder():
        with held:  # MARK: held-with
            never.wait()  # MARK: holder-waits

    def releaser():
        # gives the lock up inside its `with` (as a Condition of its own
        # would): it holds nothing while it waits
        with given_up:
            given_up.release()
            never.wait()  # MARK: releaser-waits

    for fn in (holder, releaser):
        threading.Thread(target=fn, name=fn.__name__, daemon=True).start()
    settle({"holder": "holder-waits", "releaser": "releaser-waits"})
    write_ready(READY, {"pid": os.getpid(), "held": id(held),
                        "given_up": id(given_up)})
    never.wait()


def import_slow():
    import slow_import  # MARK: imports
    return slow_import


def import_scenario():
    first = threading.Thread(target=import_slow, name="importer",
                             daemon=True)
    first.start()
    while "slow_import" not in sys.modules:
        time.sleep(0.01)
    threading.Thread(target=import_slow, name="second", daemon=True).start()
    settle({"importer": "imports", "second": "imports"})
    # (the second's frames below that line: in importlib)
    time.sleep(0.2)
    write_ready(READY, {"pid": os.getpid()})
    threading.Event().wait()


SCENARIOS = {"join": join_scenario, "exit": exit_scenario,
             "children": children_scenario, "futures": futures_scenario,
             "achildren": achildren_scenario, "queues": queues_scenario,
             "pool": pool_scenario, "released": released_scenario,
             "import": import_scenario, "starved": starved_scenario,
             "mixed": mixed_scenario, "rlock-loop": rlock_loop_scenario}

# (multiprocessing's forkserver and spawn import this file again, as
# __mp_main__, in the child)
if __name__ == "__main__":
    if SCENARIO not in SCENARIOS:
        sys.exit("unknown scenario %r" % SCENARIO)
    SCENARIOS[SCENARIO]()
