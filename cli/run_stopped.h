/*
 * `coroscope run`'s cause for a process of the tree stopped by a signal
 * (job control: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), Python or not:
 * nothing of it runs until a SIGCONT, which nothing may send (a child
 * that stopped itself, a background job that read its terminal).
 */
#ifndef COROSCOPE_CLI_RUN_STOPPED_H
#define COROSCOPE_CLI_RUN_STOPPED_H

#include <stddef.h>

#include "cli/run_causes.h"
#include "cli/run_report.h"

/* The words said of such a process, after its name. */
#define RUN_STOPPED_WORDS "stopped by a signal (job control: SIGSTOP, " \
	"SIGTSTP, SIGTTIN or SIGTTOU): nothing of it runs until a SIGCONT"

/* Is process pid of procs[0..n) stopped so (its state when the tree was
 * listed for the dump: 'T')? */
int run_proc_stopped(const struct run_proc *procs, size_t n, int pid);

/* A RUN_CAUSE_STOPPED cause for each such process of procs[0..n). */
void run_summarize_stopped(struct run_summary *s,
			   const struct run_proc *procs, size_t n);

#endif
