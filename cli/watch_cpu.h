/*
 * What the kernel accounts to each thread of a sampled process, read
 * from /proc between two samples, and a thread's share of it that is its
 * own doing rather than the stop and resume of coroscope's sampling.
 *
 *	watch_cpu_read(&now, pid);          just before the sample's stop
 *	... stop, read, resume ...
 *	watch_cpu_read(&before, pid);       just after: the target runs on
 *	... the target runs until the next sample's now ...
 *	watch_cpu_window(&before, &now, tid, &w);
 */
#ifndef COROSCOPE_CLI_WATCH_CPU_H
#define COROSCOPE_CLI_WATCH_CPU_H

#include <stddef.h>

struct watch_thread_cpu {
	int tid;
	double cpu_s;        /* user + system time */
	double wait_s;       /* runnable, waiting for a CPU; -1 unknown */
	long long runs;      /* times put on a CPU, -1 when unknown */
	long long sleeps;    /* times it went to sleep of its own accord
				(voluntary context switches), -1 unknown */
	char state;          /* status's State letter ('R', 'S' ...), 0 */
};

struct watch_cpu {
	struct watch_thread_cpu *v;
	size_t n, alloc;
	double at_ms;        /* cs_now_ms() when read */
};

/* Every thread of pid, sorted by tid; an empty table when pid is gone. */
void watch_cpu_read(struct watch_cpu *t, int pid);
void watch_cpu_release(struct watch_cpu *t);
const struct watch_thread_cpu *watch_cpu_find(const struct watch_cpu *t,
					      int tid);

/* One thread's window between two reads; negative figures: unknown. */
struct watch_window {
	double cpu_s;
	double wait_s;
	/* times it went to sleep of its own doing in the window, not
	 * counting one for our resume after a stop (or, without the
	 * kernel's sleeps, the times it was put on a CPU beyond that) */
	long sleeps;
	double window_s;
};

/* after_stop: the window began as the target was resumed from a stop
 * (not so with --no-block). */
void watch_cpu_window(const struct watch_cpu *before,
		      const struct watch_cpu *now, int tid, int after_stop,
		      struct watch_window *w);

#endif
