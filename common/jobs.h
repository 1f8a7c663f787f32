/*
 * Work handed to another thread and waited for: the capture's second
 * copier, the heap walk's tail walker, the second generator reader, a
 * JSON part and the JSON writer (none of them outlives the step that
 * started it).
 *
 * A thread of coroscope's own costs the thread that makes it 0.1-0.3 ms
 * in this VM (clone, the stack's mapping, placing it on another CPU),
 * and its first stack pages fault in one by one; a 10k-task dump made
 * six.  So a job runs on a worker kept from an earlier job where one is
 * idle, and only otherwise on a new one (cs_thread_start()): a dump
 * makes two.  Idle workers wait, every signal blocked, until the next
 * job or the process's exit.
 *
 * A worker's thread-local state outlives a job: a job sets what it uses
 * (memsrc_thread()).  Not for a thread that must outlive its starter's
 * step or be the one thread doing something (the ptrace tracer), nor in
 * a child of fork(), which would find idle workers that are not there
 * (`run` forks only before any job, and its child execs).
 */
#ifndef COROSCOPE_COMMON_JOBS_H
#define COROSCOPE_COMMON_JOBS_H

#include <stddef.h>

struct cs_job;

/*
 * Run fn(arg) on another thread, which takes no signal but, with
 * keep_sigpipe, SIGPIPE as the caller has it (for a job that writes: the
 * signal belongs to the write that raised it).  0 with *job set, to be
 * passed to cs_job_join() once; or the error pthread_create() gave, when
 * no worker was idle and none could start (then nothing runs).
 */
int cs_job_start(struct cs_job **job, void *(*fn)(void *), void *arg,
		 int keep_sigpipe);

/*
 * Start a worker that waits for a job, where none is idle: a new
 * thread runs 0.25-0.4 ms after its start here, and a job that will
 * come soon then finds a worker waiting (50-120 us).  0, or the error
 * pthread_create() gave.
 */
int cs_jobs_ready(void);

/* Wait for the job to end; what fn returned.  The job is freed. */
void *cs_job_join(struct cs_job *job);

/* Workers waiting for a job, and jobs started but not joined (for
 * tests: none is left running). */
void cs_jobs_count(size_t *idle, size_t *unjoined);

#endif
