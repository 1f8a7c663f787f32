"""`run`'s causes for threads blocked acquiring multiprocessing locks
(targets/mp_locks.py): the semaphore a multiprocessing Lock or RLock is
shared by the processes, and says only that it is taken; each process's
SemLock counts its own acquires.  Before, such a thread was "blocked
acquiring a lock" with no holder, and two in one process "a possible
deadlock".  Now the lock is named, with the process of the tree holding
it (a fork's child, a spawned child: another address), the thread
itself (not reentrant), another thread, or none (its holder was killed
holding it); a parent and child each holding what the other waits for
is a deadlock; a pool's worker waiting for a task is idle, but not on
its task queue's lock when no process holds it.  The expected pids, tids and addresses are the
processes' own (os.getpid(), the holders' pids, id())."""

import re

import pytest

from conftest import marker_line, target_script
from test_run import likely_causes, work  # noqa: F401
from test_run_reads import causes_of, run_target

SCRIPT = target_script("mp_locks.py")
STUCK = r" \(stuck for (at least )?[0-9.]+s\)"


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_mp_lock_waits_name_their_holder(ident, work):
    # (a spawned child and a pool to start first: on a loaded host, 3 s
    # left the last waits too new to be seen stuck)
    info, causes, doc, text = run_target(work, ident, SCRIPT, timeout="5")
    pid, tids, locks = info["pid"], info["tids"], info["locks"]
    holders = info["holders"]

    def cause(name, kind="Lock", deadlock=False, timer=""):
        head = [h for h in causes if re.match(
            r'^  process %d: %sthread %d "%s" is blocked acquiring '
            r'multiprocessing\.%s 0x%x( in (SemLock\.)?__enter__ '
            r'\(synchronize\.py\))?(, in C: \S+\(\))?%s%s$'
            % (pid, "deadlock: " if deadlock else "", tids[name], name,
               kind, locks[name], STUCK, timer), h)]
        assert len(head) == 1, (name, causes, text[:3000])
        lines = causes[head[0]]
        marker = "main-deadlock" if deadlock else "wait-" + name
        assert re.match(r"^at \S*mp_locks\.py:%d in \S+: .*# MARK: %s$"
                        % (marker_line(SCRIPT, marker), marker),
                        lines[0]), lines
        return lines[1:]

    def holder(hpid, marker, thread=None, name="MainThread"):
        return (r'^holder: process %d, thread %d "%s" at \S*mp_locks\.py:'
                r'%d in \S+: .*# MARK: %s$'
                % (hpid, thread or hpid, name, marker_line(SCRIPT, marker),
                   marker))

    more = cause("forked")
    assert len(more) == 1 and re.match(holder(holders["forked"], "hold"),
                                       more[0]), more
    # the spawned child's copy is at another address, the same semaphore
    more = cause("spawned", "RLock")
    assert len(more) == 1 and re.match(holder(holders["spawned"], "hold"),
                                       more[0]), more
    assert cause("killed") == [
        "held by no process run dumped (none counts an acquire it has "
        "not released): the one that acquired it may have exited or been "
        "killed holding it"]
    assert cause("itself") == [
        "this thread holds it itself (it acquired it and has not released "
        "it): a multiprocessing.Lock is not reentrant (by its ident: a "
        "thread that ended holding it may have had the same)"]
    more = cause("timed", timer=r", times out in [0-9.]+s")
    assert len(more) == 1 and re.match(
        holder(pid, "keep", info["keeper"], "keeper")[:-1] +
        r" \(taken in a `with` at line %d\)$"
        % marker_line(SCRIPT, "keep-with"), more[0]), more
    # an Event's and a full Queue's waits are on semaphores, which no
    # thread holds: no lock named, no holder
    for name in ("event", "full"):
        mine = [h for h in causes
                if re.match(r'^  process %d: .*thread %d "%s"'
                            % (pid, tids[name], name), h)]
        assert mine and not [h for h in mine if "multiprocessing." in h or
                             "deadlock" in h], (name, causes)
        assert not [d for h in mine for d in causes[h]
                    if "holder" in d or "holds it" in d], (name, causes)
    child = holders["MainThread"]
    more = cause("MainThread", deadlock=True)
    assert len(more) == 2 and re.match(holder(child, "child-deadlock"),
                                       more[0]), more
    assert more[1] == ("a deadlock: process %d's thread %d is blocked "
                       "acquiring multiprocessing.Lock 0x%x, which this "
                       "thread holds" % (child, child, info["mine"])), more
    # the child's side of it: the same lock at the same address
    theirs = causes_of(likely_causes(text), child)
    head = [h for h in theirs if h.startswith(
        '  process %d: deadlock: thread %d "MainThread" is blocked acquiring '
        'multiprocessing.Lock 0x%x' % (child, child, info["mine"]))]
    assert len(head) == 1, (theirs, text[:3000])
    assert re.match(holder(pid, "main-deadlock"), theirs[head[0]][1]), theirs
    assert not [h for h in causes if "possible deadlock" in h], causes

    # a pool's worker waits for work by design, but not for a lock that
    # no process holds: its killed predecessor took it
    worker = info["pool_worker"]
    theirs = causes_of(likely_causes(text), worker)
    head = [h for h in theirs if re.match(
        r'^  process %d: thread %d "[^"]+" is blocked acquiring '
        r'multiprocessing\.Lock 0x%x' % (worker, worker, locks["pool"]), h)]
    assert len(head) == 1, (theirs, text[:3000])
    assert theirs[head[0]][1:] == [
        "held by no process run dumped (none counts an acquire it has "
        "not released): the one that acquired it may have exited or been "
        "killed holding it"], theirs

    kinds = sorted((c["pid"], c["kind"]) for c in doc["causes"]
                   if "multiprocessing.Lock" in c["summary"] or
                   "multiprocessing.RLock" in c["summary"])
    assert kinds == sorted([(pid, "lock")] * 5 + [(pid, "lock_cycle"),
                                                  (child, "lock_cycle"),
                                                  (worker, "lock")])
    # the deadlocks lead
    assert {c["kind"] for c in doc["causes"][:2]} == {"lock_cycle"}, \
        doc["causes"][:3]


@pytest.mark.parametrize("ident", ("3.6", "3.11-debian", "3.12", "3.14",
                                   "3.14t"))
def test_manager_server_waits_by_design(ident, work):
    """A multiprocessing manager's server process waits for its stop
    and its clients by design: before, its main thread's wait on its
    stop Event was a cause, blamed on the client's `Manager()` line.
    The client's wait on the manager's socket is the cause, and the
    server's handler thread, waiting on the empty queue for it."""
    script = target_script("mp_manager.py")
    info, causes, doc, text = run_target(work, ident, script)
    pid, server = info["pid"], info["manager"]
    head = [h for h in causes if re.match(
        r'^  process %d: thread %d "MainThread" blocked reading fd \d+, '
        r'a Unix socket%s$' % (pid, info["tids"]["MainThread"], STUCK), h)]
    assert len(head) == 1, (causes, text[:3000])
    assert re.match(r"^at \S*mp_manager\.py:%d in main: .*# MARK: get$"
                    % marker_line(script, "get"), causes[head[0]][0])
    theirs = causes_of(likely_causes(text), server)
    assert not [h for h in theirs if "threading.Event" in h], theirs
    assert not [d for h in theirs for d in theirs[h]
                if "MARK: start" in d], theirs
    # (the accepter waits in accept() for good; the main thread wakes
    # every second to check for the stop, and may be caught outside its
    # wait, neither idle nor stuck then)
    assert re.search(r"process %d: \d+ (threads? )?idle by design, not "
                     r"listed: .*a multiprocessing manager's accepter "
                     r"thread \(1\)" % server, text), text[:3000]
