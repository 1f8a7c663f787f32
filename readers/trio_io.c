/*
 * What a trio task parked on a file descriptor waits for: trio's I/O
 * manager (_core/_io_epoll.py, Linux's) parks it in
 * EpollIOManager._epoll_wait(fd, attr_name), fd by then an int (a
 * socket is turned into its fileno() first), attr_name "read_task" or
 * "write_task"; a trio socket's method (recv, send, accept ...) is the
 * wrapper _socket.py makes for it, which calls the stdlib socket's
 * method in its closure's `fn` (a method_descriptor, named in C, or a
 * function of socket.py's: accept).  The wrapper's own name says
 * nothing ("wrapper").
 */
#include "readers/trio.h"

#include <string.h>

#include "common/arena.h"
#include "readers/code.h"
#include "readers/funcs.h"
#include "readers/objects.h"
#include "common/banned.h"

/* The name of fn, the stdlib socket's method a trio socket's wrapper
 * calls: a method_descriptor ("recv", named in C) or a function of
 * socket.py's ("accept"); into buf, or NULL. */
static const char *method_name(struct pyproc *py, uint64_t fn, char *buf,
			       size_t size)
{
	const struct py_code *code;
	const char *type;
	struct cs_err err;
	uint64_t tp;

	cs_err_init(&err);
	if (!fn || pyobj_read_type(py, fn, &tp, &err) < 0 ||
	    !(type = py_type_name_cached(py, tp)))
		return NULL;
	if (!strcmp(type, "function"))
		return (code = py_function_code(py, fn)) ? code->name : NULL;
	if (strcmp(type, "method_descriptor") ||
	    py_method_descr_name(py, fn, buf, size, &err) < 0 || !buf[0])
		return NULL;
	return buf;
}

static void task_io(struct pyproc *py, struct py_async *a, struct py_task *t)
{
	const char *attr, *call;
	char name[64];
	struct cs_err err;
	int64_t fd;
	size_t i;

	for (i = 0; i < t->nstack; i++) {
		const struct py_gen *g = py_task_gen(a, t, i);

		if (!g || !g->has_frame)
			continue;
		if (!t->io_wait &&
		    py_code_is(g->code, "/trio/_core/_io_epoll.py",
			       "_epoll_wait")) {
			cs_err_init(&err);
			attr = py_frame_local_str(py, &g->frame, "attr_name");
			if (!attr || pyobj_int_i64(py, py_frame_local(
					py, &g->frame, "fd"), &fd, &err) != 0 ||
			    fd < 0 || fd > 0x7fffffff)
				continue;
			t->io_fd = fd;
			t->io_wait = !strcmp(attr, "read_task") ? PY_IO_READ :
				     !strcmp(attr, "write_task") ? PY_IO_WRITE :
				     PY_IO_NONE;
		}
		if (!t->io_call &&
		    py_code_is(g->code, "/trio/_socket.py", "wrapper") &&
		    (call = method_name(py, py_frame_local(py, &g->frame,
							   "fn"), name,
					sizeof(name))) != NULL)
			t->io_call = arena_strdup(&a->pool, call);
	}
	/* (a wrapper's name with no wait on a descriptor under it) */
	if (!t->io_wait)
		t->io_call = NULL;
}

void py_trio_read_io(struct pyproc *py, struct py_async *a, size_t first)
{
	size_t i;

	/* Bounded by the tasks, each by its stack. */
	for (i = first; i < a->ntasks; i++)
		task_io(py, a, &a->tasks[i]);
}
