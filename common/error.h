/*
 * Errors shared by every layer, and the one policy for them:
 *
 * - Failure is a negative return, -code, with a message in a
 *   caller-owned struct cs_err.  Library layers (attach/, symbols/,
 *   readers/) never print and never exit: only cli/ prints the message
 *   and turns the code into an exit status, through one table,
 *   cli_exit_status() (cli/commands.h).  The codes of enum cs_status are
 *   the documented exit statuses (man/coroscope.1, EXIT STATUS); the
 *   finer codes of enum cs_cause each map to one of them.
 * - Running out of memory is not an error a caller handles: xmalloc(),
 *   xcalloc(), xrealloc(), xstrdup() and strbuf (common/strbuf.h) print
 *   "coroscope: out of memory" and exit with status 1.  Use them, and no
 *   "out of memory" branch, everywhere.
 * - err may be NULL where the caller does not care why something failed
 *   (an optional file): every function here accepts that, so no
 *   throwaway struct cs_err is needed.
 * - The innermost layer records the cause (cs_fail: the first error
 *   wins); outer layers add what only they know in front of it with
 *   cs_err_prefix(), which keeps the code ("process 42 (x) is not a
 *   Python process: no libpython mapped").  cs_refail() replaces a
 *   message whose cause the caller knows better.
 * - What could not be shown but did not stop the work is a warning, not
 *   an error: one list per collection, struct cs_warnings
 *   (common/warnings.h), that every layer appends to and cli/ prints.
 * - A broken invariant of coroscope itself is CS_BUG(): it aborts.
 */
#ifndef COROSCOPE_COMMON_ERROR_H
#define COROSCOPE_COMMON_ERROR_H

#include <stdarg.h>

/* The documented exit statuses, and the codes that stand for themselves. */
enum cs_status {
	CS_OK = 0,
	CS_ERR_INTERNAL = 1,    /* a bug (out of memory exits with it too) */
	CS_ERR_USAGE = 2,       /* bad command line */
	CS_ERR_NO_PROCESS = 3,  /* no such process */
	CS_ERR_PERMISSION = 4,  /* ptrace or memory access refused */
	CS_ERR_NOT_PYTHON = 5,  /* no CPython interpreter found in the target */
	CS_ERR_UNSUPPORTED = 6, /* a Python version we have no layout for */
	CS_ERR_EXITED = 7,      /* the target exited while we read it */
	CS_ERR_MEMORY = 8,      /* target memory unreadable or inconsistent */
	CS_ERR_CORE = 9,        /* not a core file, or a truncated one */
	CS_ERR_NO_EXE = 10,     /* the core's executable or libpython is not here */
	CS_ERR_TIMEOUT = 124,   /* `coroscope run`: the command timed out */
};

/*
 * Codes finer than an exit status, where one status covers causes a
 * caller must tell apart (a --no-block read that a changing target broke
 * is worth trying again; a thread that will not stop is not).  Never an
 * exit status themselves: cli_exit_status() maps each one.
 */
enum cs_cause {
	CS_ERR_NOT_STOPPED = 256, /* a thread did not stop (exit status 8) */
};

struct cs_err {
	int code;       /* enum cs_status or cs_cause, 0 when none recorded */
	char msg[512];  /* lowercase, no full stop, names the subject */
};

/* No error recorded.  Each function below takes err == NULL. */
void cs_err_init(struct cs_err *err);

/*
 * Record an error and return -code, so callers can write
 *     return cs_fail(err, CS_ERR_MEMORY, "cannot read frame at 0x%lx", a);
 * The first error recorded wins unless cs_err_init() was called since:
 * the innermost layer knows the most precise cause.
 */
int cs_fail(struct cs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Like cs_fail() but overwrites an earlier message. */
int cs_refail(struct cs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Add context in front of the recorded message, "context: message",
 * keeping the code (cut to fit the message buffer).  Returns -code, or
 * 0 when no error was recorded (then nothing is added).
 */
int cs_err_prefix(struct cs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Abort with a message: a broken invariant inside coroscope itself. */
#define CS_BUG(...) cs_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void cs_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
