/*
 * Greenlets (the greenlet package, and gevent's Greenlet and Hub on top
 * of it): every greenlet of the process, found by the GC walk, with its
 * state, thread, parent, gevent name and spawn function, and the Python
 * frames it is suspended in.
 *
 * greenlet keeps a suspended greenlet's frames in a private C++ object
 * whose layout no header publishes.  The offsets come from one table per
 * (greenlet major version, CPython minor version) verified against a real
 * build (see greenlets.c), and every greenlet is checked against them
 * before anything is read through them: a greenlet or CPython version the
 * table does not hold, or a greenlet that fails a check, makes
 * py_greenlets_take() refuse with CS_ERR_UNSUPPORTED rather than show a
 * wrong stack.
 */
#ifndef COROSCOPE_READERS_GREENLETS_H
#define COROSCOPE_READERS_GREENLETS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/addrmap.h"
#include "readers/gc.h"
#include "readers/pyproc.h"
#include "readers/stacks.h"

#define PY_MAX_GREENLETS (1u << 22)

enum py_greenlet_state {
	PY_GREENLET_NOT_STARTED,
	PY_GREENLET_SUSPENDED,
	PY_GREENLET_RUNNING,
	PY_GREENLET_DEAD,
};

struct py_greenlet {
	uint64_t addr;
	enum py_greenlet_state state;
	int is_main;               /* a thread's main greenlet */
	int tid;                   /* its thread, 0 when unknown */
	uint64_t parent;           /* 0 for none */
	uint64_t main_greenlet;    /* the main greenlet of its thread, or 0 */
	const char *type_name;     /* short tp_name ("Greenlet", "Hub") */
	char *name;                /* gevent's name, or NULL */
	char *function;            /* what it was spawned to run, or NULL */
	struct py_frame *frames;   /* suspended only; innermost first */
	size_t nframes;
	int truncated;             /* its frames could not all be read */
	/* Parked in a gevent socket's method on its fd, to read or to
	 * write (PY_IO_* of readers/tasks.h; PY_IO_NONE: not known), and
	 * that fd (readers/gevent_io.c). */
	int io_wait;
	int64_t io_fd;
};

struct py_greenlets {
	struct py_greenlet *v;
	size_t n;
	char version[32];          /* greenlet.__version__, "" when absent */
};

/* gevent's hub: the greenlet that runs the others of its thread. */
static inline int py_greenlet_is_hub(const struct py_greenlet *g)
{
	return g->type_name && !strcmp(g->type_name, "Hub");
}

/*
 * The greenlets one heap walk finds (py_greenlets_prepare() sets it up,
 * the walk fills it, py_greenlets_finish() reads them); fields private.
 */
struct gl_layout;
struct py_greenlet_scan {
	struct pyproc *py;
	const struct gl_layout *G;
	uint64_t gl_type, gevent_type;
	struct addrmap types;     /* type -> 1 greenlet, 2 not */
	uint64_t last_type;       /* objects of one type often follow each */
	int last_is;              /* other in the GC lists */
	uint64_t *addrs;
	size_t n, alloc;
	int too_many;
	char version[32];
};

/*
 * Before a shared heap walk (py_gc_walk_each()): 1 with *visit set when
 * greenlet is loaded and its layout understood, 0 when greenlet is not
 * loaded, CS_ERR_UNSUPPORTED when its layout is not understood.  s is
 * to be released with py_greenlet_scan_release() in every case.
 */
int py_greenlets_prepare(struct pyproc *py, struct py_greenlet_scan *s,
			 struct py_gc_visit *visit, struct cs_err *err);
/*
 * After the walk: the greenlets it found, read (errors as below).  The
 * threads of snap that gevent's monkey-patched threading left unnamed
 * get their names here.
 */
/* The fds gevent's sockets of gs's parked greenlets wait on: io_wait,
 * io_fd (readers/gevent_io.c; py_greenlets_finish() calls it). */
void py_greenlets_read_io(struct pyproc *py, struct py_greenlets *gs);

int py_greenlets_finish(struct py_greenlet_scan *s,
			struct py_snapshot *snap,
			const struct py_stack_options *opt,
			struct py_greenlets *out, struct cs_err *err);
void py_greenlet_scan_release(struct py_greenlet_scan *s);

/*
 * Find every greenlet, with a heap walk of its own.  0 with out->n == 0
 * when the greenlet module is not loaded; CS_ERR_UNSUPPORTED (out empty)
 * when greenlet's private layout is not understood for this version;
 * CS_ERR_MEMORY when the heap cannot be walked.  snap names the threads
 * (and gets the names patched threading hid, as py_greenlets_finish()).
 */
int py_greenlets_take(struct pyproc *py, struct py_snapshot *snap,
		      const struct py_stack_options *opt,
		      struct py_greenlets *out, struct cs_err *err);
void py_greenlets_release(struct py_greenlets *g);

const char *py_greenlet_state_name(enum py_greenlet_state state);

#endif
