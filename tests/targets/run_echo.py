"""A command that finishes on its own, for `coroscope run`: what it reads
on stdin comes back on stdout and stderr, with what it can see of its
own start (blocked and ignored signals), then it exits with STATUS.

Usage: run_echo.py STATUS
"""

import signal
import sys

if __name__ == "__main__":
    data = sys.stdin.read()
    blocked = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    ignored = [n for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGCHLD",
                           "SIGUSR1", "SIGPIPE", "SIGTTOU")
               if signal.getsignal(getattr(signal, n)) == signal.SIG_IGN]
    sys.stdout.write("out:%s|blocked=%r|ignored=%r\n"
                     % (data.upper(), blocked, ignored))
    sys.stdout.flush()
    sys.stderr.write("err:%s\n" % data)
    sys.exit(int(sys.argv[1]))
