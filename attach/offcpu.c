#include "attach/offcpu.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/banned.h"

/* "Now" on each CPU one of the threads last ran on: this thread's own
 * exec_start once it runs there (set as the CPU picks it after the
 * move).  *now_ns per thread, 0 where its CPU could not be reached. */
static void cpu_nows(const int *cpu, size_t n, uint64_t *now_ns)
{
	cpu_set_t saved, one;
	uint64_t now;
	size_t i, k;

	if (sched_getaffinity(0, sizeof(saved), &saved) < 0)
		return;
	for (i = 0; i < n; i++) {
		if (cpu[i] < 0 || now_ns[i])
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu[i], &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0 ||
		    procfs_exec_start(0, 0, &now) < 0)
			now = 0;
		/* every thread on that CPU, at once (bounded by n) */
		for (k = i; k < n && now; k++)
			if (cpu[k] == cpu[i])
				now_ns[k] = now;
	}
	(void)sched_setaffinity(0, sizeof(saved), &saved);
}

double offcpu_seconds(uint64_t start_ns, uint64_t now_ns, double age_s)
{
	double s;

	/* 0: the kernel zeroes exec_start when it moves a task to another
	 * CPU (migrate_task_rq_fair()), until the task runs there: when it
	 * last ran is not known.  "Now" missing is as bad. */
	if (!start_ns || !now_ns)
		return OFFCPU_UNKNOWN;
	s = now_ns > start_ns ? (double)(now_ns - start_ns) / 1e9 : 0;
	/* Off its CPU for longer than it has lived: not its CPU's clock. */
	if (age_s >= 0 && s > age_s + 1)
		return OFFCPU_UNKNOWN;
	return s;
}

/* Seconds since boot, and the clock ticks per second of stat's
 * starttime: a task's age is the one less the other's count; 0 each
 * when unknown. */
static void boot_clock(double *since_boot, double *hz)
{
	struct timespec ts;
	long tick = sysconf(_SC_CLK_TCK);

	*since_boot = *hz = 0;
	if (tick <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return;
	*since_boot = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	*hz = (double)tick;
}

void offcpu_read(int pid, struct offcpu *o)
{
	struct procfs_stat st;
	uint64_t *start, *now;
	double *age, since_boot, hz;
	char dir[48];
	int *cpu;
	size_t i;

	memset(o, 0, sizeof(*o));
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	if (procfs_list_ids(dir, OFFCPU_MAX_THREADS, 0, &o->tid, &o->n) < 0) {
		o->tid = NULL;
		o->n = 0;
		return;
	}
	o->seconds = xmallocarray(o->n ? o->n : 1, sizeof(*o->seconds));
	start = xcalloc(o->n ? o->n : 1, sizeof(*start));
	now = xcalloc(o->n ? o->n : 1, sizeof(*now));
	cpu = xmallocarray(o->n ? o->n : 1, sizeof(*cpu));
	age = xmallocarray(o->n ? o->n : 1, sizeof(*age));
	boot_clock(&since_boot, &hz);
	for (i = 0; i < o->n; i++) {
		o->seconds[i] = OFFCPU_UNKNOWN;
		cpu[i] = -1;
		if (procfs_stat(pid, o->tid[i], &st) < 0 ||
		    procfs_state_dead(st.state))
			continue;
		if (st.state == 'R') {
			o->seconds[i] = OFFCPU_RUNNING;
			continue;
		}
		age[i] = hz > 0 ? since_boot - (double)st.starttime / hz : -1;
		if (st.processor >= 0 && st.processor < CPU_SETSIZE &&
		    procfs_exec_start(pid, o->tid[i], &start[i]) == 0)
			cpu[i] = st.processor;
	}
	cpu_nows(cpu, o->n, now);
	for (i = 0; i < o->n; i++)
		if (cpu[i] >= 0)
			o->seconds[i] = offcpu_seconds(start[i], now[i],
						       age[i]);
	free(age);
	free(start);
	free(now);
	free(cpu);
}

double offcpu_of(const struct offcpu *o, int tid)
{
	size_t lo = 0, hi = o->n, mid;

	while (lo < hi) {  /* bounded: the range halves */
		mid = lo + (hi - lo) / 2;
		if (o->tid[mid] == tid)
			return o->seconds[mid];
		if (o->tid[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return OFFCPU_UNKNOWN;
}

void offcpu_release(struct offcpu *o)
{
	free(o->tid);
	free(o->seconds);
	memset(o, 0, sizeof(*o));
}
