/*
 * The fd of a stdlib socket object: socket.socket (and gevent's) is a
 * Python subclass of the _socket module's C socket, whose fd is in its
 * C struct only (PySocketSockObject.sock_fd, from the _socket module's
 * DWARF: readers/layout.h), read there once the object's type is known
 * to be _socket.socket or a subclass of it.
 */
#include "readers/sockets.h"

#include <string.h>

#include "readers/fields.h"
#include "readers/gens.h"
#include "readers/objects.h"
#include "common/banned.h"

/* Bases of a socket's class looked through for _socket.socket. */
#define MAX_BASES 8

/* Is type _socket.socket or a class whose bases' chain reaches it
 * (judged once per type where memo is given: 1 yes, 2 no)? */
static int is_socket_type(struct pyproc *py, struct addrmap *memo,
			  uint64_t type)
{
	uint64_t base = type;
	struct cs_err err;
	const char *name;
	uintptr_t v = 2;
	int depth, found = 0;

	if (memo) {
		v = (uintptr_t)addrmap_get(memo, type, &found);
		if (found)
			return v == 1;
		v = 2;
	}
	cs_err_init(&err);
	for (depth = 0; base && depth < MAX_BASES; depth++) {
		if ((name = py_type_name_cached(py, base)) &&
		    !strcmp(name, "_socket.socket")) {
			v = 1;
			break;
		}
		if (py_field_u64(py, base, py->layout.tp_base, &base,
				 &err) < 0)
			break;
	}
	if (memo)
		addrmap_put(memo, type, (void *)v);
	return v == 1;
}

int64_t py_socket_fd(struct pyproc *py, uint64_t sock, struct addrmap *memo)
{
	struct cs_err err;
	uint64_t type;
	int32_t fd;

	cs_err_init(&err);
	if (!sock || py->layout.sock_fd < 0 ||
	    pyobj_read_type(py, sock, &type, &err) < 0 ||
	    !is_socket_type(py, memo, type) ||
	    py_field_i32(py, sock, py->layout.sock_fd, &fd, &err) < 0 ||
	    fd < 0)
		return -1;
	return fd;
}
