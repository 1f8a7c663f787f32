/*
 * The socket a gevent greenlet is parked on: in a method of gevent's
 * socket (gevent/_socketcommon.py's recv, send, connect and their kin,
 * _socket3.py's accept, recvmsg, sendmsg), which waits on the hub for
 * its fd.  The method's `self` keeps the stdlib's C socket in its
 * `_sock` slot, whose fd readers/sockets.c reads (gevent's _wrefsocket
 * is a subclass of _socket.socket).
 *
 * Only a parked greenlet's innermost frames are looked at: the method
 * is the innermost Python frame (the hub's wait is C).
 */
#include "readers/greenlets.h"

#include <string.h>

#include "common/addrmap.h"
#include "readers/code.h"
#include "readers/dicts.h"
#include "readers/objects.h"
#include "readers/sockets.h"
#include "readers/tasks.h"
#include "common/banned.h"

/* Frames looked at, from the innermost: sendall() calls send(). */
#define IO_FRAMES 3

static const struct {
	const char *file, *function;
	int io;                 /* PY_IO_READ or PY_IO_WRITE */
} methods[] = {
	{ "/gevent/_socketcommon.py", "recv", PY_IO_READ },
	{ "/gevent/_socketcommon.py", "recv_into", PY_IO_READ },
	{ "/gevent/_socketcommon.py", "recvfrom", PY_IO_READ },
	{ "/gevent/_socketcommon.py", "recvfrom_into", PY_IO_READ },
	{ "/gevent/_socket3.py", "accept", PY_IO_READ },
	{ "/gevent/_socket3.py", "recvmsg", PY_IO_READ },
	{ "/gevent/_socket3.py", "recvmsg_into", PY_IO_READ },
	{ "/gevent/_socketcommon.py", "send", PY_IO_WRITE },
	{ "/gevent/_socketcommon.py", "sendto", PY_IO_WRITE },
	{ "/gevent/_socketcommon.py", "connect", PY_IO_WRITE },
	{ "/gevent/_socket3.py", "sendmsg", PY_IO_WRITE },
};
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

/* Which method code is (index + 1), 0 none: judged once per code. */
static size_t method_of(struct addrmap *memo, const struct py_code *code)
{
	uint64_t key = (uint64_t)(uintptr_t)code;
	uintptr_t v;
	size_t k;
	int found;

	v = (uintptr_t)addrmap_get(memo, key, &found);
	if (found)
		return (size_t)v;
	for (k = 0; k < NMETHODS; k++)
		if (py_code_is(code, methods[k].file, methods[k].function))
			break;
	v = k < NMETHODS ? k + 1 : 0;
	addrmap_put(memo, key, (void *)v);
	return (size_t)v;
}

void py_greenlets_read_io(struct pyproc *py, struct py_greenlets *gs)
{
	struct addrmap codes, types;
	size_t i, k, m;

	addrmap_init(&codes);
	addrmap_init(&types);
	/* Bounded by the greenlets, each by IO_FRAMES. */
	for (i = 0; i < gs->n; i++) {
		struct py_greenlet *g = &gs->v[i];

		for (k = 0; k < g->nframes && k < IO_FRAMES; k++) {
			const struct py_frame *f = &g->frames[k];
			uint64_t self;
			int64_t fd;

			if (!f->code || !(m = method_of(&codes, f->code)))
				continue;
			/* the C socket in the gevent socket's _sock */
			self = py_frame_local(py, f, "self");
			fd = self ? py_socket_fd(py, pyobj_own_or_0(py, self,
								    "_sock"),
						 &types) : -1;
			if (fd >= 0) {
				g->io_wait = methods[m - 1].io;
				g->io_fd = fd;
			}
			break;
		}
	}
	addrmap_release(&types);
	addrmap_release(&codes);
}
