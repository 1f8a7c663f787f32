#include "common/util.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/banned.h"

double cs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *cs_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int cs_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int cs_cpus(void)
{
	static _Atomic int cpus;  /* 0: not counted yet */
	int n = atomic_load(&cpus);
	const char *env;
	char *end;
	long v;
	cpu_set_t set;

	if (n)
		return n;
	/* Test aid (the man page's ENVIRONMENT): a count to act on, so
	 * that tests take every path on any machine. */
	env = getenv("COROSCOPE_TEST_CPUS");
	if (env && *env) {
		v = strtol(env, &end, 10);
		n = *end == '\0' && v >= 1 && v <= 1024 ? (int)v : 0;
	}
	if (!n)
		n = sched_getaffinity(0, sizeof(set), &set) == 0 ?
		    CPU_COUNT(&set) : 1;
	if (n < 1)
		n = 1;
	atomic_store(&cpus, n);
	return n;
}

int cs_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg,
		    int keep_sigpipe)
{
	sigset_t all, old;
	int ret;

	pthread_sigmask(SIG_SETMASK, NULL, &old);
	sigfillset(&all);
	if (keep_sigpipe && !sigismember(&old, SIGPIPE))
		sigdelset(&all, SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	ret = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}
