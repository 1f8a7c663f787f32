"""A target with a subinterpreter, for coroscope's per-interpreter reports.

Usage: subinterp_target.py READY_FILE

Needs 3.12+ (3.12 _xxsubinterpreters, 3.13 _interpreters, 3.14
concurrent.interpreters).  The main interpreter's thread "runner" runs
code in a subinterpreter, so one OS thread holds a thread state of each
interpreter; that code (this file's sub_main(), imported in the
subinterpreter) starts a thread "sub-worker" running an event loop with
a task "sub-task" parked on a future, keeps a generator suspended, and
parks.  The main interpreter keeps its own suspended generator.  Each
side writes what it knows of itself (interpreter id, native thread ids);
once both have, the main thread writes READY_FILE (atomically) and parks.

Other versions exit with status 3 (nothing to show).
"""

import json
import os
import sys
import threading
import time


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.rename(tmp, path)


def held(label):
    yield label  # MARK: held-yield


# -- runs inside the subinterpreter ------------------------------------------

def current_interp_id():
    try:
        from concurrent import interpreters
        return interpreters.get_current().id
    except ImportError:
        pass
    try:
        import _interpreters as low
    except ImportError:
        import _xxsubinterpreters as low
    cur = low.get_current()
    return int(cur[0] if isinstance(cur, tuple) else cur)


def sub_worker(workdir, gen):
    import asyncio

    async def sub_wait(fut):
        await fut  # MARK: sub-task-await

    async def sub_loop():
        fut = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(sub_wait(fut))
        if hasattr(task, "set_name"):
            task.set_name("sub-task")
        await asyncio.sleep(0)
        write_json(os.path.join(workdir, "sub-worker.json"),
                   {"tid": threading.get_native_id(), "task": "sub-task"})
        time.sleep(1e6)  # MARK: sub-worker-park

    asyncio.run(sub_loop())


def sub_main(workdir):
    gen = held("sub")
    next(gen)
    t = threading.Thread(target=sub_worker, args=(workdir, gen),
                         name="sub-worker")
    t.start()
    write_json(os.path.join(workdir, "sub-main.json"),
               {"interp": current_interp_id(),
                "tid": threading.get_native_id()})
    time.sleep(1e6)  # MARK: sub-park


# -- runs in the main interpreter ----------------------------------------------

def run_in_new_interpreter(code):
    """Create an interpreter and a callable running code in it."""
    try:
        from concurrent import interpreters
        interp = interpreters.create()
        return interp.id, lambda: interp.exec(code)
    except ImportError:
        pass
    try:
        import _interpreters as low
    except ImportError:
        import _xxsubinterpreters as low
    interp = low.create()
    return int(interp), lambda: low.run_string(interp, code)


def main():
    ready = sys.argv[1]
    if sys.version_info < (3, 12):
        sys.exit(3)
    workdir = os.path.dirname(os.path.abspath(ready))
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import subinterp_target\n"
            "subinterp_target.sub_main(%r)\n" % (here, workdir))
    sub_id, run = run_in_new_interpreter(code)
    main_gen = held("main")
    next(main_gen)
    runner_tid = []

    def runner():
        runner_tid.append(threading.get_native_id())
        run()  # MARK: runner-run

    threading.Thread(target=runner, name="runner", daemon=True).start()
    parts = {}
    deadline = time.monotonic() + 60
    while len(parts) < 2 and time.monotonic() < deadline:
        for name in ("sub-main", "sub-worker"):
            path = os.path.join(workdir, name + ".json")
            if name not in parts and os.path.exists(path):
                with open(path) as f:
                    parts[name] = json.load(f)
        time.sleep(0.05)
    write_json(ready, {
        "pid": os.getpid(), "main_interp": current_interp_id(),
        "sub_interp": sub_id, "main_tid": threading.get_native_id(),
        "runner_tid": runner_tid[0], "sub_main": parts.get("sub-main"),
        "sub_worker": parts.get("sub-worker")})
    time.sleep(1e6)  # MARK: main-park
    return main_gen


if __name__ == "__main__":
    main()
