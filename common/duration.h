/*
 * Durations on the command line ("90", "90s", "1.5m", "15m", "1h", "2d"),
 * as timeout(1) spells them: a decimal number, optionally with a
 * fraction, and one unit letter (s, m, h, d; none means seconds).
 * Kept in milliseconds, which is as fine as any wait coroscope does.
 */
#ifndef COROSCOPE_COMMON_DURATION_H
#define COROSCOPE_COMMON_DURATION_H

#include <stddef.h>

#include "common/error.h"

/* The longest duration accepted: a year is plenty for any CI job, and
 * keeps every deadline computed from it far from overflow. */
#define DURATION_MAX_MS (366LL * 24 * 3600 * 1000)

/*
 * Parse s into *ms.  Errors: CS_ERR_USAGE, with a message naming the
 * text ("invalid duration '1x'", "duration '9999d' is too long").
 * Fractions finer than a millisecond are rounded down.
 */
int duration_parse(const char *s, long long *ms, struct cs_err *err);

/*
 * The shortest exact text for ms in the same notation ("90s", "15m",
 * "1h", "1.5s", "0s"), for messages; always NUL-terminated within len.
 */
void duration_format(long long ms, char *buf, size_t len);

#endif
