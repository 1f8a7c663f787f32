"""A target for the text report's presentation (tests/test_present.py).

Usage: present_target.py READY_FILE COUNT [SECRET_DIR]

The main thread runs an asyncio loop whose main task parks on a future
while COUNT identical tasks park in `parked()` on one Event.  A thread
parks in `hold_locals()` with locals of every kind --locals names (a
class, a library's exception class, a builtin class, a function, a bound
method, a module, an instance, a list of 5) and records the ids.
With SECRET_DIR, the module `secret_mod` is imported from it (as root: the
test made it a root-only file), the process then drops to nobody (its
saved uid stays 0, only to write READY_FILE), and a thread parks in
secret_mod.park().  READY_FILE gets the pids and tids once all are parked.

Must run unchanged on CPython 3.7 through 3.14.
"""

import asyncio
import json
import os
import sys
import threading
import time

STOP = threading.Event()
READY = {}


class Widget(object):
    class Part(object):
        pass

    def poke(self):
        return 1


def helper_function():
    return 2


def hold_locals(ready):
    a_class = Widget
    a_function = helper_function
    an_instance = Widget()
    a_method = an_instance.poke
    a_module = json
    an_error_class = json.JSONDecodeError
    a_builtin_class = KeyError
    five = [10, 20, 30, 40, 50]
    a_nested_class = Widget.Part
    a_nested_instance = Widget.Part()
    READY["ids"] = {"a_function": id(a_function),
                    "an_instance": id(an_instance)}
    # (as the interpreter says them: by __qualname__, "Widget.Part")
    READY["reprs"] = {"a_nested_class": repr(a_nested_class),
                      "a_nested_instance": repr(a_nested_instance)}
    ready.set()
    while not STOP.is_set():
        time.sleep(0.2)  # MARK: hold-locals
    return (a_class, a_function, a_method, a_module, an_error_class,
            a_builtin_class, five, a_nested_class, a_nested_instance)


async def parked(ev):
    await ev.wait()  # MARK: parked


async def main(count, started):
    ev = asyncio.Event()
    tasks = [asyncio.ensure_future(parked(ev)) for _ in range(count)]
    await asyncio.sleep(0.05)
    started.set()
    fut = asyncio.get_event_loop().create_future()
    await fut  # MARK: main-parked
    return tasks


def write_ready(path, data):
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.rename(path + ".tmp", path)


def drop_to_nobody():
    import pwd
    nobody = pwd.getpwnam("nobody")
    os.setgroups([])
    os.setresgid(nobody.pw_gid, nobody.pw_gid, 0)
    os.setresuid(nobody.pw_uid, nobody.pw_uid, 0)
    return nobody.pw_uid


def run(path, count, secret_dir):
    threads = []
    ready = threading.Event()
    READY["pid"] = os.getpid()
    if secret_dir:
        sys.path.insert(0, secret_dir)
        import secret_mod
        READY["uid"] = drop_to_nobody()
        sready = threading.Event()
        threads.append(threading.Thread(target=secret_mod.park,
                                        args=(sready, STOP), daemon=True))
        threads[-1].start()
        sready.wait(10)
    threads.append(threading.Thread(target=hold_locals, args=(ready,),
                                    daemon=True, name="holder"))
    threads[-1].start()
    ready.wait(10)
    started = threading.Event()

    def report():
        started.wait(30)
        time.sleep(0.1)
        if secret_dir:
            os.seteuid(0)
        write_ready(path, READY)
        if secret_dir:
            os.seteuid(READY["uid"])

    threading.Thread(target=report, daemon=True).start()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.run_until_complete(main(count, started))


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]),
        sys.argv[3] if len(sys.argv) > 3 else None)
