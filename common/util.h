/*
 * Small helpers every layer uses: a monotonic clock in milliseconds, the
 * last component of a path, string equality, the CPUs to run on.
 */
#ifndef COROSCOPE_COMMON_UTIL_H
#define COROSCOPE_COMMON_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in milliseconds: for durations, never for dates. */
double cs_now_ms(void);

/* The part of path after its last '/', or path itself. */
const char *cs_base_name(const char *path);

/* Whether s ends with suffix. */
int cs_ends_with(const char *s, const char *suffix);

/* Whether a and b are the same text (NULL equals only NULL). */
int cs_str_eq(const char *a, const char *b);

/* CPUs this process may run on (its affinity mask, or the test aid
 * COROSCOPE_TEST_CPUS; counted once): what decides whether work is
 * worth a second thread. */
int cs_cpus(void);

/*
 * Start fn(arg) on a thread of its own that takes no signal: those
 * coroscope handles (the detach guard's) stay with the main thread.
 * With keep_sigpipe, SIGPIPE stays as the caller has it, for a thread
 * that writes (it belongs to the write that raised it).  0, or the
 * error pthread_create() gave.
 */
int cs_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    int keep_sigpipe);

/*
 * The same for a thread of ours that sleeps, about to be woken (a job's
 * worker, common/jobs.c): woken, Linux often runs it on its waker's CPU,
 * which it then takes or waits behind (seen: the capture's second
 * copier starting 2.8-3.7 ms late in 3 dumps of 20, the reserve's faults
 * on the stopping thread's CPU in 8).  cs_thread_elsewhere(tid, all):
 * let thread tid run on the CPUs of all (its own set) but the caller's;
 * 0, or -1 when it may run anywhere still (no other CPU, or the kernel
 * refused).  Until it runs, it waits for one of those even if the
 * caller's CPU falls idle: a slice at most.  cs_thread_everywhere(all),
 * by that thread once it runs: its whole set again; 0 or -1.
 */
int cs_thread_elsewhere(pid_t tid, const cpu_set_t *all);
int cs_thread_everywhere(const cpu_set_t *all);

#endif
