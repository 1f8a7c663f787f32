#include "attach/offcpu.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void offcpu_read(int pid, struct offcpu *o)
{
	struct procfs_stat st;
	uint64_t *start, *now;
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
		if (st.processor >= 0 && st.processor < CPU_SETSIZE &&
		    procfs_exec_start(pid, o->tid[i], &start[i]) == 0)
			cpu[i] = st.processor;
	}
	cpu_nows(cpu, o->n, now);
	for (i = 0; i < o->n; i++)
		if (cpu[i] >= 0 && now[i])
			o->seconds[i] = now[i] > start[i] ?
					(double)(now[i] - start[i]) / 1e9 : 0;
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
