/*
 * Errors and exit statuses shared by every layer.
 *
 * Library layers (attach/, symbols/, readers/) never print: they fill a
 * caller-owned struct cs_err and return -code.  Only cli/ prints the message
 * and exits with the code, so each code below is also a documented exit
 * status of the coroscope command (see man/coroscope.1, EXIT STATUS).
 */
#ifndef COROSCOPE_COMMON_ERROR_H
#define COROSCOPE_COMMON_ERROR_H

#include <stdarg.h>

enum cs_status {
	CS_OK = 0,
	CS_ERR_INTERNAL = 1,    /* a bug, or out of memory */
	CS_ERR_USAGE = 2,       /* bad command line */
	CS_ERR_NO_PROCESS = 3,  /* no such process */
	CS_ERR_PERMISSION = 4,  /* ptrace or memory access refused */
	CS_ERR_NOT_PYTHON = 5,  /* no CPython interpreter found in the target */
	CS_ERR_UNSUPPORTED = 6, /* a Python version we have no layout for */
	CS_ERR_EXITED = 7,      /* the target exited while we read it */
	CS_ERR_MEMORY = 8,      /* target memory unreadable or inconsistent */
	CS_ERR_CORE = 9,        /* not a core file, or a truncated one */
	CS_ERR_NO_EXE = 10,     /* the core's executable cannot be found */
	CS_ERR_TIMEOUT = 124,   /* `coroscope run`: the command timed out */
};

struct cs_err {
	int code;       /* enum cs_status, 0 when no error was recorded */
	char msg[512];  /* lowercase, no full stop, names the subject */
};

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

/* Abort with a message: a broken invariant inside coroscope itself. */
#define CS_BUG(...) cs_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void cs_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
