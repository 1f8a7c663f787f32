/*
 * Thread stacks: every thread state of every interpreter, with its
 * native thread id, Python thread name, GIL ownership and Python frames.
 *
 * The result is plain data (struct py_snapshot) that cli/ formats; it
 * borrows strings from the pyproc's caches, so it must be freed before
 * the pyproc is released.
 */
#ifndef COROSCOPE_READERS_STACKS_H
#define COROSCOPE_READERS_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "readers/code.h"
#include "readers/pyproc.h"

/* Bounds for walks over target lists. */
#define PY_MAX_INTERPRETERS 256
#define PY_MAX_THREADS 16384
#define PY_MAX_FRAMES 4096

struct py_local {
	const char *name;   /* borrowed from the code object */
	char *repr;         /* owned */
};

struct py_frame {
	uint64_t addr;               /* frame (PyFrameObject or iframe) */
	const struct py_code *code;  /* borrowed from the code cache */
	int line;                    /* -1 when unknown */
	/* The outermost frame its C eval loop call runs (always before
	 * 3.11, where each Python frame has its own): native merging
	 * (readers/native_merge.h) gives the next frames to the next
	 * _PyEval_EvalFrameDefault out. */
	int entry;
	struct py_local *locals;     /* only when asked for */
	size_t nlocals;
};

struct py_thread {
	uint64_t tstate;
	uint64_t interp;
	uint64_t thread_id;      /* pthread_t, threading.get_ident() */
	int tid;                 /* kernel thread id, 0 when unknown */
	char *name;              /* threading name, NULL when unknown */
	int holds_gil;           /* 1, 0, or -1 when unknown */
	struct py_frame *frames; /* innermost first */
	size_t nframes;
	int truncated;           /* the walk stopped at PY_MAX_FRAMES or at
				    an unreadable frame */
};

struct py_snapshot {
	struct py_thread *threads;
	size_t nthreads;
};

struct py_stack_options {
	int locals;              /* read each frame's locals */
};

/*
 * Walk every interpreter's thread list.  Errors: CS_ERR_MEMORY when the
 * interpreter list itself cannot be read; a thread whose frames cannot be
 * read is kept with truncated set.
 */
int py_snapshot_take(struct pyproc *py, const struct py_stack_options *opt,
		     struct py_snapshot *snap, struct cs_err *err);
void py_snapshot_release(struct py_snapshot *snap);

/*
 * Decode the frame chain starting at `frame` (a PyFrameObject before
 * 3.11, an _PyInterpreterFrame after) into frames, innermost first; used
 * for threads and, later, for suspended generators.
 */
int py_frames_walk(struct pyproc *py, uint64_t frame, int follow,
		   const struct py_stack_options *opt,
		   struct py_frame **frames, size_t *nframes,
		   struct cs_err *err);
void py_frames_free(struct py_frame *frames, size_t n);

/* Decode one frame into *out: 1 when it is a frame to show, 0 when it is
 * not (a shim frame, or one not running code), or a negative status. */
int py_frame_read(struct pyproc *py, uint64_t frame,
		  const struct py_stack_options *opt, struct py_frame *out,
		  struct cs_err *err);

/* The code kind names used in output: "function", "generator", ... */
const char *py_code_kind_name(enum py_code_kind kind);

#endif
