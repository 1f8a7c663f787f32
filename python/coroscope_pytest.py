"""pytest plugin: when a test runs too long, show where it hangs.

With ``--coroscope-timeout=SECONDS`` (or ``coroscope_timeout`` in the ini
file, or ``@pytest.mark.coroscope_timeout(SECONDS)`` on a test), a test
that is still running after SECONDS is dumped by ``coroscope dump``: every
thread's stack, every asyncio task with what it awaits, every generator of
the pytest process, headed by the test's node id.  The dump goes to the
terminal at once and into the test's failure report; then the test fails
and the run goes on (``--coroscope-timeout-method=fail``, the default) or
stops after it (``stop``).  ``--coroscope-args`` passes options to
``coroscope dump`` (``--locals``, ``--native``).

How the test is failed: the dump is taken from a watchdog thread, so the
stuck test's own frames are what the dump shows; then SIGALRM goes to the
main thread, whose handler raises the failure.  That interrupts a test
blocked in sleep, a lock, an Event, a queue or an asyncio event loop (the
handler runs as soon as the blocking call returns EINTR), as pytest-timeout's
signal method does; a test stuck inside C code that never returns to Python
cannot be failed this way.  With ``stop`` such a test ends the whole run
after a grace period.

Permission: coroscope, a child of the pytest process, must ptrace its own
parent.  Under Yama's ``kernel.yama.ptrace_scope=1`` (the default on
Ubuntu, Fedora, Debian with Yama enabled) only a declared tracer may, so
the child is started halted (a shell waiting on a pipe), declared with
``prctl(PR_SET_PTRACER, child)``, and only then allowed to exec coroscope
(exec keeps its pid).  Scope 2 or 3, or a container without SYS_PTRACE,
still refuse: coroscope then says what is missing.
"""
import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading

import pytest

PR_SET_PTRACER = 0x59616D61     # "Yama" in ASCII, from <linux/prctl.h>
DUMP_TIMEOUT = 60.0             # seconds coroscope may take to dump
STOP_GRACE = 10.0               # seconds a "stop" test has to come back
METHODS = ("fail", "stop")


def pytest_addoption(parser):
    group = parser.getgroup("coroscope", "dump hanging tests with coroscope")
    group.addoption(
        "--coroscope-timeout", type=float, default=None, metavar="SECONDS",
        help="dump the pytest process with coroscope and fail a test that "
             "runs longer than SECONDS (0: never)")
    group.addoption(
        "--coroscope-timeout-method", choices=METHODS, default=None,
        help="after the dump: fail the test and go on (fail, the default) "
             "or fail it and stop the run (stop)")
    group.addoption(
        "--coroscope-args", default=None, metavar="ARGS",
        help="options for `coroscope dump`, e.g. '--locals'")
    parser.addini("coroscope_timeout",
                  "as --coroscope-timeout", default=None)
    parser.addini("coroscope_timeout_method",
                  "as --coroscope-timeout-method", default=None)
    parser.addini("coroscope_args", "as --coroscope-args", default=None)


class Settings(object):
    def __init__(self, timeout, method, args):
        self.timeout = timeout
        self.method = method
        self.args = args


def _setting(config, name):
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    return value if value not in ("", None) else None


def _read_settings(config):
    timeout = _setting(config, "coroscope_timeout")
    try:
        timeout = float(timeout) if timeout is not None else 0.0
    except ValueError:
        raise pytest.UsageError(
            "coroscope_timeout: %r is not a number of seconds" % timeout)
    method = _setting(config, "coroscope_timeout_method") or "fail"
    if method not in METHODS:
        raise pytest.UsageError(
            "coroscope_timeout_method: %r is not one of %s"
            % (method, ", ".join(METHODS)))
    args = shlex.split(_setting(config, "coroscope_args") or "")
    return Settings(max(timeout, 0.0), method, args)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "coroscope_timeout(seconds): this test's "
                   "--coroscope-timeout (0: never)")
    config._coroscope = _read_settings(config)


def find_coroscope():
    """The coroscope next to this interpreter (a wheel's), else on PATH."""
    dirs = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    try:
        dirs.append(sysconfig.get_path("scripts", "%s_user" % os.name))
    except KeyError:
        pass
    for d in dirs:
        path = os.path.join(d or "", "coroscope")
        if d and os.access(path, os.X_OK):
            return path
    return shutil.which("coroscope")


def allow_ptrace_by(pid):
    """Let pid ptrace this process under Yama's ptrace_scope=1.

    Fails harmlessly (EINVAL) where Yama is not built in, and needs no
    undoing: the kernel drops the exception when that process exits.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PTRACER, ctypes.c_ulong(pid), ctypes.c_ulong(0),
                   ctypes.c_ulong(0), ctypes.c_ulong(0))
    except (OSError, AttributeError):
        pass


def dump_process(binary, args, pid):
    """coroscope dump's output for pid (stderr included), as text."""
    argv = [binary, "dump"] + list(args) + [str(pid)]
    # The shell holds still until this process has named it as a permitted
    # tracer, then becomes coroscope under the same pid.
    child = subprocess.Popen(
        ["/bin/sh", "-c", 'read go && exec "$@"', "sh"] + argv,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    allow_ptrace_by(child.pid)
    try:
        out, _ = child.communicate(b"go\n", timeout=DUMP_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        out, _ = child.communicate()
        out += b"\n(coroscope took longer than %ds and was killed)\n" \
            % DUMP_TIMEOUT
    text = out.decode("utf-8", "replace")
    if child.returncode:
        text += "(coroscope exited with status %d)\n" % child.returncode
    return text


class Watchdog(object):
    """One test's deadline: a thread that dumps, then alerts the main thread."""

    current = None      # the Watchdog of the running test, if any

    def __init__(self, item, timeout, settings):
        self.item = item
        self.timeout = timeout
        self.settings = settings
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.report = None          # header + dump, once taken
        self.in_phase = False       # inside setup, call or teardown
        self.delivered = False
        self.thread = threading.Thread(target=self._watch,
                                       name="coroscope-watchdog")
        self.thread.daemon = True

    def start(self):
        self.previous = signal.signal(signal.SIGALRM, _on_alarm)
        Watchdog.current = self
        self.thread.start()

    def stop(self):
        with self.lock:
            self.done.set()
        self.thread.join(DUMP_TIMEOUT + 5)
        Watchdog.current = None
        # None: a handler not installed from Python; the default is the
        # closest we can restore.
        signal.signal(signal.SIGALRM,
                      signal.SIG_DFL if self.previous is None
                      else self.previous)

    def _watch(self):
        if self.done.wait(self.timeout):
            return
        binary = find_coroscope()
        header = ("coroscope: %s still running after %gs (--coroscope-"
                  "timeout); dump of the pytest process %d:\n"
                  % (self.item.nodeid, self.timeout, os.getpid()))
        if binary is None:
            body = ("coroscope: the coroscope executable was not found next "
                    "to %s nor on PATH\n" % sys.executable)
        else:
            body = dump_process(binary, self.settings.args, os.getpid())
        with self.lock:
            if self.done.is_set():
                return
            self.report = header + body
        signal.pthread_kill(threading.main_thread().ident, signal.SIGALRM)
        if self.settings.method == "stop" and \
                not self.done.wait(STOP_GRACE):
            self._exit_uninterruptible()

    def _exit_uninterruptible(self):
        """The test ignored the alarm and the run must stop: end it here."""
        capman = self.item.config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.suspend_global_capture(in_=True)
        sys.stderr.write(
            "%s\ncoroscope: %s did not return to Python within %gs of the "
            "alarm; ending the run (--coroscope-timeout-method=stop)\n"
            % (self.report, self.item.nodeid, STOP_GRACE))
        sys.stderr.flush()
        os._exit(1)

    def write_terminal(self):
        config = self.item.config
        reporter = config.pluginmanager.getplugin("terminalreporter")
        capman = config.pluginmanager.getplugin("capturemanager")
        disabled = getattr(capman, "global_and_fixture_disabled", None)
        if disabled is None:
            return
        with disabled():
            if reporter is not None:
                reporter.write_line("")
                reporter.write_sep("+", "coroscope: timeout")
                reporter.write(self.report)
                reporter.write_sep("+", "coroscope: timeout")
            else:
                sys.stderr.write(self.report)


def _on_alarm(signum, frame):
    watch = Watchdog.current
    if watch is None or watch.report is None or watch.delivered:
        return
    if not watch.in_phase:
        return
    watch.delivered = True
    watch.write_terminal()
    if watch.settings.method == "stop":
        watch.item.session.shouldstop = (
            "coroscope: %s timed out" % watch.item.nodeid)
    pytest.fail(watch.report, pytrace=False)


def _timeout_of(item, settings):
    marker = item.get_closest_marker("coroscope_timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    return settings.timeout


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    settings = getattr(item.config, "_coroscope", None)
    timeout = _timeout_of(item, settings) if settings else 0.0
    if timeout <= 0 or threading.current_thread() is not \
            threading.main_thread():
        yield
        return
    watch = Watchdog(item, timeout, settings)
    watch.start()
    try:
        yield
    finally:
        watch.stop()


def _phase():
    """The body of the setup, call and teardown wrappers: the alarm may
    fail the test inside them, not while pytest itself reports."""
    watch = Watchdog.current
    if watch is not None:
        watch.in_phase = True
        if watch.report is not None and not watch.delivered:
            # The alarm came between phases: deliver it now.
            signal.pthread_kill(threading.main_thread().ident,
                                signal.SIGALRM)
    yield
    if watch is not None:
        watch.in_phase = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _phase()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _phase()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _phase()
