/*
 * Threads that wait for work by design -- a multiprocessing pool's
 * workers and handler threads, an executor's idle workers, a process
 * pool's manager thread, a multiprocessing queue's feeder thread with
 * nothing to send, multiprocessing's resource tracker and fork server,
 * gevent's threadpool's idle workers -- which samples
 * see make no progress like any stuck thread: `watch` calls them idle,
 * not stuck (cli/watch_sample.c), and `run` counts them apart, or they
 * would fill its short list of what is stuck (cli/run_report.c).
 */
#ifndef COROSCOPE_CLI_THREAD_IDLE_H
#define COROSCOPE_CLI_THREAD_IDLE_H

#include "readers/stacks.h"

/*
 * What t is, when one of its frames is such a loop and every frame
 * inside it is a library's (none the program's own, readers/usercode.h):
 * "a multiprocessing pool's handler thread", ...; else NULL.  A worker
 * running a job (the program's frames inside the loop, or a library's
 * call that is not the loop's wait for work, a job's time.sleep()) is
 * not idle.
 */
const char *thread_idle_by_design(const struct py_thread *t);

#endif
