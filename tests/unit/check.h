/*
 * The unit tests' one assertion: CHECK(cond, fmt, ...) counts a pass or
 * prints "FAIL file:line: message" and counts a failure; CHECK_DONE()
 * prints the closing "N passed, N failed" line that tools/run-unit and CI
 * read, and gives main()'s exit status.  Include it from one .c file per
 * test program only (the counters live here).
 */
#ifndef COROSCOPE_TESTS_UNIT_CHECK_H
#define COROSCOPE_TESTS_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

/* A broken decoder fails thousands of table-driven checks; print the
 * first ones, count the rest. */
#define CHECK_MAX_REPORTED 30

static int check_passed, check_failed;

static void check_at(const char *file, int line, int ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5), unused));

static void check_at(const char *file, int line, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		check_passed++;
		return;
	}
	if (check_failed++ >= CHECK_MAX_REPORTED)
		return;
	printf("FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

#define CHECK(ok, ...) check_at(__FILE__, __LINE__, (ok) != 0, __VA_ARGS__)

/* Print the closing line with the program's name; main returns this. */
#define CHECK_DONE(name) \
	(check_failed > CHECK_MAX_REPORTED ? \
	 printf("(%d more failures not shown)\n", \
		check_failed - CHECK_MAX_REPORTED) : 0, \
	 printf("%s: %d passed, %d failed\n", (name), check_passed, \
		check_failed), check_failed ? 1 : 0)

#endif
