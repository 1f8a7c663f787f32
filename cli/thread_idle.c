#include "cli/thread_idle.h"

#include <string.h>

#include "common/util.h"
#include "readers/usercode.h"
#include "common/banned.h"

/* Where a loop waits for work: in a call into one of these files (a
 * queue's get), or with C_WAIT also in C straight from the loop's own
 * frame (queue.SimpleQueue.get).  Anything else inside a loop that runs
 * jobs is a job, which may be stuck: an executor's worker in
 * time.sleep() that a job called is not idle.  ANY: a loop that runs no
 * job (a handler thread), idle wherever it is. */
#define C_WAIT 1
#define ANY 2
static const char *const mp_queues[] = {
	"/multiprocessing/queues.py", "/multiprocessing/connection.py", NULL
};
static const char *const std_queue[] = { "/queue.py", NULL };
static const char *const gevent_queue[] = { "/gevent/_threading.py", NULL };
static const char *const std_threading[] = { "/threading.py", NULL };
static const char *const in_c_only[] = { NULL };

static const struct {
	const char *file, *function, *what;
	const char *const *waits_in;
	int how;
} loops[] = {
	{ "/multiprocessing/pool.py", "worker",
	  "a multiprocessing pool's worker", mp_queues, 0 },
	{ "/multiprocessing/pool.py", "_handle_workers",
	  "a multiprocessing pool's handler thread", NULL, ANY },
	{ "/multiprocessing/pool.py", "_handle_tasks",
	  "a multiprocessing pool's handler thread", NULL, ANY },
	{ "/multiprocessing/pool.py", "_handle_results",
	  "a multiprocessing pool's handler thread", NULL, ANY },
	{ "/concurrent/futures/thread.py", "_worker",
	  "an executor's worker thread", std_queue, C_WAIT },
	{ "/concurrent/futures/process.py", "_process_worker",
	  "a process pool's worker", mp_queues, 0 },
	/* (a thread of its own from 3.9, a function before) */
	{ "/concurrent/futures/process.py", "run",
	  "a process pool's manager thread", NULL, ANY },
	{ "/concurrent/futures/process.py", "_queue_management_worker",
	  "a process pool's manager thread", NULL, ANY },
	/* idle in its Condition's wait, not in a send to a full pipe */
	{ "/multiprocessing/queues.py", "_feed",
	  "a multiprocessing queue's feeder thread", std_threading, 0 },
	/* a manager's server process: its main thread waits for the
	 * stop, its accepter for clients, a client's handler for the next
	 * request (in a request's call, the handler is not idle) */
	{ "/multiprocessing/managers.py", "serve_forever",
	  "a multiprocessing manager's server", std_threading, 0 },
	{ "/multiprocessing/managers.py", "accepter",
	  "a multiprocessing manager's accepter thread", NULL, ANY },
	{ "/multiprocessing/managers.py", "serve_client",
	  "a multiprocessing manager's handler thread", mp_queues, 0 },
	{ "/multiprocessing/resource_tracker.py", "main",
	  "multiprocessing's resource tracker", NULL, ANY },
	{ "/multiprocessing/forkserver.py", "main",
	  "multiprocessing's fork server", NULL, ANY },
	{ "/gevent/threadpool.py", "run",
	  "a gevent threadpool's worker thread", gevent_queue, 0 },
	/* to_thread.run_sync()'s workers: anyio's on asyncio (starlette's
	 * and FastAPI's plain handlers) wait in their queue.Queue's get(),
	 * trio's in a lock acquired in C, with a timeout */
	{ "/anyio/_backends/_asyncio.py", "run", "anyio's worker thread",
	  std_queue, 0 },
	{ "/trio/_core/_thread_cache.py", "_work", "trio's worker thread",
	  in_c_only, C_WAIT },
	/* execnet's reader of its channel's pipe (pytest-xdist's, in the
	 * controller and in each worker): it reads the next message */
	{ "/execnet/gateway_base.py", "_thread_receiver",
	  "an execnet gateway's receiver thread", NULL, ANY },
	/* an execnet worker's main thread between jobs (an xdist worker
	 * with no test left to run) */
	{ "/execnet/gateway_base.py", "integrate_as_primary_thread",
	  "an execnet worker's main thread, waiting for work", std_threading,
	  0 },
	/* pytest-xdist's controller: its main thread waits for the
	 * workers' events (the hanging tests are theirs) */
	{ "/xdist/dsession.py", "loop_once",
	  "pytest-xdist's controller, waiting for its workers", std_queue,
	  0 },
};

/* The entry of the loop code is, or -1. */
static long loop_of(const struct py_code *code)
{
	size_t k;

	for (k = 0; k < sizeof(loops) / sizeof(loops[0]); k++)
		if (!strcmp(code->name, loops[k].function) &&
		    cs_ends_with(code->filename, loops[k].file))
			return (long)k;
	return -1;
}

/* Does loop k, at frame i of t, wait for work (not run a job)? */
static int waits_for_work(size_t k, const struct py_thread *t, size_t i)
{
	const struct py_code *callee;
	size_t f;

	if (loops[k].how == ANY)
		return 1;
	if (i == 0)
		return loops[k].how == C_WAIT;
	callee = t->frames[i - 1].code;
	for (f = 0; loops[k].waits_in[f]; f++)
		if (cs_ends_with(callee->filename, loops[k].waits_in[f]))
			return 1;
	return 0;
}

const char *thread_idle_by_design(const struct py_thread *t)
{
	size_t i;
	long k;

	/* From the innermost frame out, bounded by the thread's frames:
	 * the loop's callers may be the program's (a forked worker keeps
	 * the frames that forked it), what it runs now may not. */
	for (i = 0; i < t->nframes; i++) {
		const struct py_code *code = t->frames[i].code;

		if (!code || !code->filename || !code->name ||
		    py_is_user_file(code->filename, NULL))
			return NULL;
		if ((k = loop_of(code)) >= 0)
			return waits_for_work((size_t)k, t, i) ?
			       loops[k].what : NULL;
	}
	return NULL;
}
