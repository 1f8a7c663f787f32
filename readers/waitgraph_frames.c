/*
 * What the wait-for graph reads off frames: from a frame's code alone
 * (its file and names), whether the frame is a primitive's library,
 * where `self` is what the thread or task waits on, and whether it is a
 * server's idle wait (readers/waitgraph.c asks once per code object);
 * a frame's locals; the pytest test a thread runs; and where the
 * target's standard library is.
 */
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "common/util.h"
#include "readers/dicts.h"
#include "readers/fields.h"
#include "readers/objects.h"
#include "readers/usercode.h"
#include "common/banned.h"

/* Files whose frames hold the primitive waited on in `self`; trio's
 * traps and parking lot are the frames under them, with no primitive
 * of their own, and anyio's backends the Event its primitives wait on
 * (the outermost primitive is the one waited on). */
int wg_is_prim_lib(const char *file)
{
	static const char *const ends[] = {
		"/threading.py", "/queue.py", "/concurrent/futures/_base.py",
		"/asyncio/locks.py", "/asyncio/queues.py", "/asyncio/streams.py",
		"/trio/_sync.py",
		"/trio/_channel.py", "/trio/_abc.py", "/trio/_core/_traps.py",
		"/trio/_core/_parking_lot.py", "/anyio/_core/_synchronization.py",
		"/anyio/streams/memory.py", "/anyio/_backends/_asyncio.py", "/anyio/_backends/_trio.py",
		"/tornado/locks.py", "/subprocess.py", "/selectors.py",
		"/multiprocessing/process.py", "/multiprocessing/popen_fork.py",
		"/multiprocessing/popen_forkserver.py",
		"/multiprocessing/connection.py", "/multiprocessing/pool.py",
		"/asyncio/subprocess.py",
		"/asyncio/base_subprocess.py",
		"/gevent/lock.py", "/gevent/thread.py", "/aiohttp/connector.py",
	};
	size_t i;

	/* (a module lock's; frozen in every version) */
	if (file && !strcmp(file, "<frozen importlib._bootstrap>"))
		return 1;
	for (i = 0; file && i < sizeof(ends) / sizeof(ends[0]); i++)
		if (cs_ends_with(file, ends[i]))
			return 1;
	return 0;
}

/* A multiprocessing queue's feeder thread's loop. */
static int is_feeder(const struct py_frame *f)
{
	return py_code_is(f->code, "/multiprocessing/queues.py", "_feed");
}

int wg_idle_inside(const struct py_frame *const *f, size_t k)
{
	if (!is_feeder(f[k]))
		return 1;
	return k > 0 && py_code_is(f[k - 1]->code, "/threading.py", "wait");
}

/*
 * Waits that are a server's normal rest: a listener's accept, a gevent
 * server's serve_forever() (its stop event), uvicorn's
 * main loop and lifespan queue, a keep-alive connection's read; and a
 * multiprocessing queue's feeder thread waiting for something to send
 * (the Condition it waits on is its own queue's).
 */
int wg_idle_frame(const struct py_frame *f)
{
	static const char *const names[] = {
		"serve_forever", "_accept_connection", "sock_accept",
		"accept", "main_loop", "on_tick", "startup", "lifespan",
		"wait_closed",
	};
	static const char *const uvicorn_quals[] = {
		"LifespanOn.receive", "LifespanOn.main", "Server.serve",
		"Server._serve", "Server.main_loop",
	};
	const char *file = f->code->filename, *q = f->code->qualname;
	size_t i;

	if (is_feeder(f))
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f->code->name && !strcmp(f->code->name, names[i]) &&
		    file && (strstr(file, "/asyncio/") ||
			     strstr(file, "/uvicorn/") ||
			     cs_ends_with(file, "/socket.py") ||
			     cs_ends_with(file, "/socketserver.py") ||
			     /* (gevent's servers: serve_forever() waits
			      * on the server's stop event) */
			     cs_ends_with(file, "/gevent/baseserver.py") ||
			     cs_ends_with(file, "/gevent/_socket3.py")))
			return 1;
	for (i = 0; q && file && strstr(file, "/uvicorn/") &&
		    i < sizeof(uvicorn_quals) / sizeof(uvicorn_quals[0]); i++)
		if (!strcmp(q, uvicorn_quals[i]))
			return 1;
	return 0;
}

char *wg_pytest_node(struct pyproc *py, const struct py_thread *t)
{
	static const char *const runners[] = {
		"pytest_runtest_call", "pytest_runtest_setup",
		"pytest_runtest_teardown", "runtestprotocol",
		"pytest_runtest_protocol", "call_and_report",
	};
	struct cs_err err;
	size_t k, i;
	int off;

	for (k = 0; k < t->nframes; k++) {
		const char *name = t->frames[k].code->name, *s;
		uint64_t item, id;

		for (i = 0; name && i < sizeof(runners) / sizeof(runners[0]); i++)
			if (!strcmp(name, runners[i]))
				break;
		if (!name || i == sizeof(runners) / sizeof(runners[0]))
			continue;
		item = py_frame_local(py, &t->frames[k], "item");
		cs_err_init(&err);
		if (!item)
			continue;
		/* pytest's Node keeps _nodeid in a slot (7.x), or older
		 * versions in the instance dict. */
		if (pyobj_slot_offset(py, item, "_nodeid", &off, &err) == 0) {
			if (py_field_u64(py, item, off, &id, &err) <= 0)
				continue;
		} else if (cs_err_init(&err),
			   pyobj_get_attr(py, item, "_nodeid", &id, &err) != 0) {
			continue;
		}
		if (pystr_get(py, id, &s, &err) == 0)
			return xstrdup(s);
	}
	return NULL;
}

void wg_find_stdlib(const struct py_snapshot *snap, char *out, size_t len)
{
	size_t i, k;

	for (i = 0; i < snap->nthreads && !out[0]; i++) {
		const struct py_thread *t = &snap->threads[i];

		for (k = 0; k < t->nframes && !out[0]; k++)
			py_stdlib_dir(t->frames[k].code->filename, out, len);
	}
}

/* The frame a unit is named as innermost in (frames innermost first):
 * past trio's traps, the call above them says more (trio.sleep(), not
 * the sleep_forever() it ends in); if all are traps, the innermost (as
 * watch's task_inner()). */
const struct py_frame *wg_unit_inner(const struct py_frame *const *f,
				      size_t n)
{
	size_t k;

	for (k = 0; k < n && py_is_scheduler_trap(f[k]->code->filename); k++)
		;
	while (k + 1 < n && py_is_trio_sleep(f[k]->code->filename) &&
	       py_is_trio_sleep(f[k + 1]->code->filename))
		k++;
	return n ? f[k < n ? k : 0] : NULL;
}
