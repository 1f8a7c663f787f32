/*
 * Small helpers every layer uses: a monotonic clock in milliseconds and
 * the last component of a path.
 */
#ifndef COROSCOPE_COMMON_UTIL_H
#define COROSCOPE_COMMON_UTIL_H

/* CLOCK_MONOTONIC in milliseconds: for durations, never for dates. */
double cs_now_ms(void);

/* The part of path after its last '/', or path itself. */
const char *cs_base_name(const char *path);

#endif
