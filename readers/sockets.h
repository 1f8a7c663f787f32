/*
 * A stdlib socket object's fd, from the _socket module's C struct
 * (readers/sockets.c): gevent's sockets and socketserver's servers keep
 * one.
 */
#ifndef COROSCOPE_READERS_SOCKETS_H
#define COROSCOPE_READERS_SOCKETS_H

#include <stdint.h>

#include "common/addrmap.h"
#include "readers/pyproc.h"

/* The fd of socket object sock (a _socket.socket or an instance of a
 * subclass: socket.socket, gevent's), or -1 (not one, unreadable).
 * memo (or NULL): types judged, kept by the caller across calls. */
int64_t py_socket_fd(struct pyproc *py, uint64_t sock, struct addrmap *memo);

#endif
