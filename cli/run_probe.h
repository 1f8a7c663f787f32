/*
 * What the kernel and the target's source files say of the threads of a
 * process `coroscope run` dumped, for the cause analysis
 * (cli/run_causes.h).  Read through /proc/PID while the process exists.
 */
#ifndef COROSCOPE_CLI_RUN_PROBE_H
#define COROSCOPE_CLI_RUN_PROBE_H

#include "cli/run_causes.h"
#include "readers/stacks.h"

/* One struct run_thread_facts per thread of snap (free with
 * run_probe_release()). */
struct run_thread_facts *run_probe_threads(int pid,
					   const struct py_snapshot *snap);
void run_probe_release(struct run_thread_facts *facts, size_t n);

#endif
