/*
 * How long each thread of a live process has been off its CPU: since it
 * last ran, for one that sleeps (blocked in a lock, a read, a sleep, a
 * stop).  Read before coroscope stops the threads, since stopping one
 * makes it run (and so would a debugger's stop before).
 *
 * From the kernel's per-task se.exec_start (/proc/PID/task/TID/sched),
 * which is on the clock of the CPU the task last ran on: coroscope's own
 * thread reads its exec_start on that same CPU for "now".  That clock
 * leaves out the CPU's interrupt and stolen time, so a figure may fall
 * short of the wall time by that much (about 1 % on a busy virtual
 * machine).  Kernels without sched debug files give nothing.
 */
#ifndef COROSCOPE_ATTACH_OFFCPU_H
#define COROSCOPE_ATTACH_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

/* Threads read at most (the first ones by tid): each costs two /proc
 * reads before the stop. */
#define OFFCPU_MAX_THREADS 256

#define OFFCPU_UNKNOWN (-1.0)
#define OFFCPU_RUNNING (-2.0)  /* running or runnable ('R') */

struct offcpu {
	int *tid;            /* ascending */
	double *seconds;     /* per tid: >= 0, or OFFCPU_UNKNOWN/_RUNNING */
	size_t n;
};

/* Read every thread of pid (up to OFFCPU_MAX_THREADS).  Never fails:
 * what cannot be read is OFFCPU_UNKNOWN.  Moves the calling thread
 * over the CPUs the threads last ran on, and back to its own set. */
void offcpu_read(int pid, struct offcpu *out);
/* Seconds off its CPU of a task whose exec_start is start_ns, "now" on
 * that CPU's clock now_ns, which started age_s ago (-1 unknown):
 * OFFCPU_UNKNOWN where either is 0 or the figure exceeds its age. */
double offcpu_seconds(uint64_t start_ns, uint64_t now_ns, double age_s);
/* The figure for tid: OFFCPU_UNKNOWN when not read. */
double offcpu_of(const struct offcpu *o, int tid);
void offcpu_release(struct offcpu *o);

#endif
