/*
 * Where a pool's job runs.  A thread pool's: the worker thread the
 * graph leads to.  A process pool's, across the processes `run` dumped:
 * a task that awaits run_in_executor() on a ProcessPoolExecutor, or a
 * thread in Future.result(), waits on a concurrent future no thread of
 * its process runs; the job runs in a child (or, with the "forkserver"
 * start method, 3.14's default, a child of its fork server), a pool
 * worker (concurrent/futures/process.py's _process_worker) that is not
 * waiting for work.  Its cause names that child and the job's line, as
 * it names the worker thread of a thread pool's job.  Which of several
 * busy workers runs which job only the parent's pending work items and
 * the workers' locals tell, which are not read: with more than one, the
 * cause names them all as "one of".
 */
#ifndef COROSCOPE_CLI_RUN_POOL_H
#define COROSCOPE_CLI_RUN_POOL_H

#include <stddef.h>

#include "cli/run_causes.h"
#include "cli/run_report.h"
#include "readers/waitgraph.h"

struct run_pool_job {
	int pid;                      /* the worker process */
	const struct py_thread *th;   /* its thread running the job */
};

/* Is thread t a process pool's worker running a job (its loop on its
 * stack, and not waiting for the next): concurrent.futures', or a
 * multiprocessing.Pool's? */
int run_pool_runs_job(const struct py_thread *t);

/* The jobs that the dumped children of process pid (or of its fork
 * server) among procs[0..n) run, into *out (the caller frees it; NULL
 * when none); how many. */
size_t run_pool_jobs(const struct run_proc *procs, size_t n, int pid,
		     struct run_pool_job **out);

/* A detail line naming the worker thread the wait of graph node `node`
 * (a task's; -1: none) leads to, where it is and (facts: NULL when not
 * known) the C call it is blocked in: "its job runs in thread 12 ...";
 * the worker's thread state into `said` (NULL: none), whose thread is
 * then no cause of its own too (struct run_summary's said_threads).
 * Nothing (0) when the wait leads to no thread; 1 when added. */
int run_add_worker(struct run_cause *cause, const struct py_waitgraph *g,
		   const struct py_snapshot *snap,
		   const struct run_thread_facts *facts, long node,
		   struct addrmap *said, struct strbuf *sb);

/* "its job runs in process 12 at app.py:9 in crunch" (or "in one of 2
 * pool worker processes: ...") when graph node `node` (a task's; -1:
 * none) waits on a concurrent future that no thread of its process
 * runs and s->jobs has some; 1 when added. */
int run_add_pool_job(struct run_cause *cause, const struct run_summary *s,
		     long node, struct strbuf *sb);

/* "pool worker process 12 at app.py:9 in crunch: a job still running",
 * a detail for each worker among graph nodes[0..n) (a cause's child
 * processes waited on: a multiprocessing.Pool's, for its result) that
 * runs a job of s->jobs; 1 when one was added. */
/* "none of these workers runs a job: ...", where graph node and
 * sib[0..n) are worker processes a multiprocessing.Pool's result waits
 * for (a cause's, and its siblings merged into it), each of
 * them dumped, and none runs a job of s->jobs: what is left of the
 * result waits for a job no worker runs (one that died running it, an
 * OOM kill: the pool starts another, and the job is lost).  1 when
 * added. */
int run_add_pool_idle(struct run_cause *cause, const struct run_summary *s,
		      const struct py_waitgraph *g, size_t node,
		      const size_t *sib, size_t n, struct strbuf *sb);
/* Does a multiprocessing.Pool's result wait for process node? */
int run_pool_result_waits(const struct py_waitgraph *g, size_t node);
/* Does process pid run a job of s->jobs? */
int run_pool_pid_runs_job(const struct run_summary *s, int64_t pid);
int run_add_process_jobs(struct run_cause *cause, const struct run_summary *s,
			 const struct py_waitgraph *g, const size_t *nodes,
			 size_t n, struct strbuf *sb);

#endif
