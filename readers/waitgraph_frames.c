/*
 * What the wait-for graph reads off a frame's code alone (its file and
 * names): whether the frame is a primitive's library, where `self` is
 * what the thread or task waits on, and whether it is a server's idle
 * wait.  readers/waitgraph.c asks once per code object.
 */
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "common/util.h"
#include "common/banned.h"

/* Files whose frames hold the primitive waited on in `self`; trio's
 * traps and parking lot are the frames under them, with no primitive
 * of their own, and anyio's backends the Event its primitives wait on
 * (the outermost primitive is the one waited on). */
int wg_is_prim_lib(const char *file)
{
	static const char *const ends[] = {
		"/threading.py", "/queue.py", "/concurrent/futures/_base.py",
		"/asyncio/locks.py", "/asyncio/queues.py", "/trio/_sync.py",
		"/trio/_channel.py", "/trio/_abc.py", "/trio/_core/_traps.py",
		"/trio/_core/_parking_lot.py", "/anyio/_core/_synchronization.py",
		"/anyio/_backends/_asyncio.py", "/anyio/_backends/_trio.py",
	};
	size_t i;

	for (i = 0; file && i < sizeof(ends) / sizeof(ends[0]); i++)
		if (cs_ends_with(file, ends[i]))
			return 1;
	return 0;
}

/*
 * Waits that are a server's normal rest: a listener's accept, uvicorn's
 * main loop and lifespan queue, a keep-alive connection's read.
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

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f->code->name && !strcmp(f->code->name, names[i]) &&
		    file && (strstr(file, "/asyncio/") ||
			     strstr(file, "/uvicorn/") ||
			     cs_ends_with(file, "/socket.py") ||
			     cs_ends_with(file, "/socketserver.py")))
			return 1;
	for (i = 0; q && file && strstr(file, "/uvicorn/") &&
		    i < sizeof(uvicorn_quals) / sizeof(uvicorn_quals[0]); i++)
		if (!strcmp(q, uvicorn_quals[i]))
			return 1;
	return 0;
}
