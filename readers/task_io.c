/*
 * The socket an asyncio task waits to read from, where the library it
 * reads through keeps no object the wait-for graph knows: anyio's
 * SocketStream (httpx, starlette's clients) waits on an Event of its
 * protocol's, aiohttp's client on its response handler's DataQueue or
 * a StreamReader's future.  Each keeps the asyncio transport, and the
 * selector transports keep their socket's fd (_sock_fd; uvloop's
 * transports are C and keep none).  asyncio's own StreamReader is the
 * graph's (readers/primitives.c), not read here.
 *
 * Only the innermost frames of a waiting task are looked at, and each
 * code object is judged once (10,000 alike tasks share a few).
 */
#include "readers/tasks_internal.h"

#include <string.h>

#include "common/addrmap.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Frames of a task's chain looked at, from the innermost. */
#define IO_FRAMES 3

static const struct {
	const char *file, *function;
	const char *path[4];    /* attributes from `self` to the fd */
} readers[] = {
	/* SocketStream.receive(): `await self._protocol.read_event.wait()` */
	{ "/anyio/_backends/_asyncio.py", "receive",
	  { "_transport", "_sock_fd", NULL } },
	/* ResponseHandler (a DataQueue).read(): the response's head */
	{ "/aiohttp/streams.py", "read", { "transport", "_sock_fd", NULL } },
	/* StreamReader._wait(): its body */
	{ "/aiohttp/streams.py", "_wait",
	  { "_protocol", "transport", "_sock_fd", NULL } },
};
#define NREADERS (sizeof(readers) / sizeof(readers[0]))

/* Codes judged: the last one at each depth (alike tasks come in a
 * row), then all of them. */
struct judged {
	const struct py_code *last[IO_FRAMES];
	size_t last_r[IO_FRAMES];
	struct addrmap memo;
};

/* Which reader code, at depth k of a chain, is (index + 1), 0 none:
 * judged once per code (key: the code cache's entry, one per code
 * object). */
static size_t reader_of(struct judged *j, const struct py_code *code,
			size_t depth)
{
	uint64_t key = (uint64_t)(uintptr_t)code;
	uintptr_t v;
	size_t k;
	int found;

	if (j->last[depth] == code)
		return j->last_r[depth];
	j->last[depth] = code;
	v = (uintptr_t)addrmap_get(&j->memo, key, &found);
	if (found)
		return j->last_r[depth] = (size_t)v;
	for (k = 0; k < NREADERS; k++)
		if (py_code_is(code, readers[k].file, readers[k].function))
			break;
	v = k < NREADERS ? k + 1 : 0;
	addrmap_put(&j->memo, key, (void *)v);
	return j->last_r[depth] = (size_t)v;
}

/* The fd at the end of reader k's path from frame f's `self`, or -1. */
static int64_t fd_of(struct pyproc *py, const struct py_frame *f, size_t k)
{
	uint64_t v = py_frame_local(py, f, "self");
	struct cs_err err;
	int64_t fd;
	size_t i;

	for (i = 0; v && readers[k].path[i + 1]; i++)
		v = pyobj_own_or_0(py, v, readers[k].path[i]);
	cs_err_init(&err);
	if (!v || v == py->types.none)
		return -1;
	v = pyobj_own_or_0(py, v, readers[k].path[i]);
	if (!v || pyobj_int_i64(py, v, &fd, &err) != 0 || fd < 0 ||
	    fd > 0x7fffffff)
		return -1;
	return fd;
}

void tasks_read_io(struct builder *b)
{
	struct py_async *a = b->out;
	struct judged j;
	size_t i, k;

	memset(&j, 0, sizeof(j));
	addrmap_init(&j.memo);
	/* Bounded by the tasks, each by IO_FRAMES. */
	for (i = 0; i < a->ntasks; i++) {
		struct py_task *t = &a->tasks[i];

		if (t->framework || !t->waiter)
			continue;
		for (k = 0; k < t->nstack && k < IO_FRAMES; k++) {
			const struct py_gen *g = py_task_gen(a, t, k);
			size_t r;
			int64_t fd;

			if (!g || !g->has_frame || !g->code ||
			    !(r = reader_of(&j, g->code, k)))
				continue;
			if ((fd = fd_of(b->py, &g->frame, r - 1)) >= 0) {
				t->io_wait = PY_IO_READ;
				t->io_fd = fd;
			}
			break;
		}
	}
	addrmap_release(&j.memo);
}
