/*
 * A thread blocked in select(), poll() or epoll_wait() and the fds it
 * waits on, in run's words (cli/run_polls.c).
 */
#ifndef COROSCOPE_CLI_RUN_POLLS_H
#define COROSCOPE_CLI_RUN_POLLS_H

#include "cli/collect.h"
#include "cli/run_causes.h"

/* Did thread th call the wait itself: its innermost frame the
 * program's own, or the selectors module's or a socket method's (under
 * a timeout) called from it (not an event loop's, whose tasks say what
 * they wait for)? */
int run_polls_direct(const struct py_thread *th);

/* What run_reads_call() is told of a thread whose poll waits it names. */
struct run_polls_ask {
	const char *native_call;   /* its innermost C function, or NULL */
};

/* Is thread tid of pid, in restart_syscall(2) (*nr), a poll(2) an
 * earlier stop interrupted (which the kernel restarts so, its registers
 * still the call's; select(2) and ppoll(2) restart as themselves), as
 * its innermost C function (native_call, NULL unknown) or the kernel's
 * sleep in poll_schedule_timeout() says?  1 with *nr set to poll's
 * number, else 0. */
int run_polls_restarted(int pid, int tid, const char *native_call, long *nr);

/* " blocked in poll() on fd 3, a Unix socket", " blocked in select() on
 * 3 fds: fd 3, ...; fd 5; fd 7, ...": what live process c's thread waits
 * on in call nr with arguments args (its fds read from its memory, or
 * its epoll instance's fdinfo at /proc/pid); s: the tree, for a pipe's
 * write end.  0, or -1 with nothing added when nr waits on no fd or its
 * fds cannot be read. */
int run_polls_describe(struct strbuf *sb, const struct run_summary *s,
		       const struct collection *c, int pid, long nr,
		       const unsigned long long args[3]);

#endif
