/*
 * The process's threads as the kernel counts them (the "Threads:" line
 * of /proc/self/status), for unit tests that check no thread is left
 * behind; -1 when it cannot be read.  A thread that has just ended is
 * counted a little longer than its join takes: thread_count_settled()
 * waits (up to 2 s) for the count to reach want, and gives the last.
 */
#ifndef COROSCOPE_TESTS_SUPPORT_THREAD_COUNT_H
#define COROSCOPE_TESTS_SUPPORT_THREAD_COUNT_H

int thread_count(void);
int thread_count_settled(int want);

#endif
