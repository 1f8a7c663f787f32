/*
 * The live-process backend of struct memsrc.
 *
 * Life cycle, built so that the target is stopped as briefly as possible:
 *   live_open()    -- check the pid, read its mappings and thread list;
 *                     memory is readable now, racily (the --no-block mode
 *                     and symbol discovery use this).
 *   live_stop()    -- PTRACE_SEIZE + PTRACE_INTERRUPT every thread and
 *                     wait until all are stopped, from a thread of its
 *                     own that holds them; refresh the thread list (with
 *                     each thread's registers) and clear the cache.
 *   live_resume()  -- detach every thread (that thread exits); idempotent.
 *   memsrc_free()  -- resumes if needed, then frees.
 *
 * Seize, never PTRACE_ATTACH: if coroscope dies (even by SIGKILL) the
 * kernel detaches seized threads and they simply run on, whereas the
 * SIGSTOP of PTRACE_ATTACH could leave the target stopped.
 *
 * live_install_signal_guard() makes SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * give every stopped thread the signal it held back before coroscope
 * dies of the signal (its death detaches them all).
 */
#ifndef COROSCOPE_ATTACH_LIVE_H
#define COROSCOPE_ATTACH_LIVE_H

#include "attach/memsrc.h"

/*
 * Errors: CS_ERR_NO_PROCESS (no such pid, or a zombie),
 * CS_ERR_PERMISSION (message explains why: other user, TracerPid,
 * ptrace_scope, capabilities).
 */
int live_open(struct memsrc **out, int pid, struct cs_err *err);

/* Errors: CS_ERR_PERMISSION (already traced...), CS_ERR_EXITED. */
int live_stop(struct memsrc *ms, struct cs_err *err);

void live_resume(struct memsrc *ms);

/*
 * A thread asleep in a call that sends bytes (write(2), send(2), ...)
 * is not stopped: interrupted, it would return what it has sent so far,
 * which CPython's unbuffered text streams drop the rest of
 * (attach/live_writers.c).  live_left_ran() says whether one such
 * thread ran while the target was read since the last call (then what
 * was read may be torn: read again); live_stop_every_thread() makes the
 * next stops stop those threads too (for a last try).
 */
int live_left_ran(struct memsrc *ms);
void live_stop_every_thread(struct memsrc *ms, int every);

/* Milliseconds the target has been held stopped so far (all stops),
 * from the moment its last thread stopped to its resumption. */
double live_paused_ms(const struct memsrc *ms);

/* When its threads last all stood stopped (CLOCK_MONOTONIC, ms): the
 * moment a read of the stopped target shows; 0 before any stop. */
double live_stopped_at_ms(const struct memsrc *ms);

/* Milliseconds spent stopping it (all stops): from the first thread
 * seized to the last one stopped.  Its first threads are stopped that
 * much longer than live_paused_ms() says. */
double live_stop_ms(const struct memsrc *ms);

/* Is the process still there?  (Used to tell "exited" from bad memory.) */
int live_alive(const struct memsrc *ms);
/* The same by pid: its main thread, or any other thread, not a zombie. */
int live_pid_alive(int pid);
/* The same, but a process whose main thread has exited while others
 * have not yet is given up to 0.1 s to finish (a SIGKILL's threads die
 * one at a time, and its memory is gone before the last): still there
 * after that, it is alive (its main thread called pthread_exit()). */
int live_alive_settled(const struct memsrc *ms);

void live_install_signal_guard(void);

/* 1 and the wait status when a wait of coroscope's as a tracer reaped
 * the exit of process pid (its real parent's report, when coroscope is
 * that parent too), once; else 0. */
int live_reaped_status(int pid, int *status);

/* The target's command line, NUL-separated args joined with spaces
 * (newly allocated), or NULL. */
char *live_cmdline(int pid);

#endif
