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
#define PY_MAX_FRAMES 4096        /* frames kept per thread by default */
#define PY_OUTER_FRAMES 8         /* of them, the outermost (as Python's
				     tracebacks keep both ends) */
#define PY_MAX_FRAME_WALK (1u << 20) /* links followed at most */

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
	/* The byte offset of its instruction in the bytecode, the one
	 * `line` comes from (up to 3.10 f_lasti in bytes). */
	long offset;
	struct py_local *locals;     /* only when asked for */
	size_t nlocals;
};

struct py_thread {
	uint64_t tstate;
	uint64_t interp;
	int64_t interp_id;       /* PyInterpreterState.id (0 before 3.7) */
	int interp_main;         /* the main interpreter (id 0) */
	uint64_t thread_id;      /* pthread_t, threading.get_ident() */
	int tid;                 /* kernel thread id, 0 when unknown */
	char *name;              /* threading name, NULL when unknown */
	int holds_gil;           /* 1, 0, or -1 when unknown */
	struct py_frame *frames; /* innermost first */
	size_t nframes;
	/* A stack deeper than max_frames keeps its innermost and its
	 * PY_OUTER_FRAMES outermost frames: `omitted` frames were left out
	 * between frames[omitted_at - 1] and frames[omitted_at] (0, 0 when
	 * none were).  A deliberate cap, not a failure. */
	size_t omitted;
	size_t omitted_at;
	int truncated;           /* the walk stopped at an unreadable frame
				    (or a loop): older frames are missing */
	/* Set by the caller, who knows the kernel's threads: this one has
	 * exited (a main thread that called pthread_exit()), and the
	 * interpreter still lists it as it was. */
	int exited;
};

struct py_snapshot {
	struct py_thread *threads;  /* interpreter by interpreter */
	size_t nthreads;
	size_t ninterps;            /* interpreters walked */
};

struct py_stack_options {
	int locals;              /* read each frame's locals */
	size_t max_frames;       /* frames kept per thread, 0: PY_MAX_FRAMES */
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
 * Is the process a child that multiprocessing forked (the "fork" start
 * method: a process pool's worker, a Process), running no event loop of
 * its own?  Its one thread's frames go on from the parent's, through
 * popen_fork.py's _launch() into process.py's _bootstrap(); a loop of
 * the child's own would run inside that.  What the parent's tasks were
 * at the fork is copied, and none will run here.
 */
int py_snapshot_forked_child(const struct py_snapshot *snap);

/* Is t in an asyncio loop's wait for events: a selector's select()
 * called from a loop's _run_once()?  By the name alone: nest_asyncio
 * replaces asyncio's _run_once() with its own (and runs the loop again
 * inside a task's step). */
int py_thread_in_loop_select(const struct py_thread *t);

/*
 * Decode the frame chain starting at `frame` (a PyFrameObject before
 * 3.11, an _PyInterpreterFrame after) into frames, innermost first, with
 * the cap of opt->max_frames (the gap is not reported: threads carry it
 * in struct py_thread).  follow = 0 reads one frame.
 */
int py_frames_walk(struct pyproc *py, uint64_t frame, int follow,
		   const struct py_stack_options *opt,
		   struct py_frame **frames, size_t *nframes,
		   struct cs_err *err);
void py_frames_free(struct py_frame *frames, size_t n);

/* Whether two runs of n frames are at the same places: the same code
 * objects (one cache per collection: the same address is the same code)
 * and lines. */
int py_frames_same_places(const struct py_frame *a, const struct py_frame *b,
			  size_t n);

/* Decode one frame into *out: 1 when it is a frame to show, 0 when it is
 * not (a shim frame, or one not running code), or a negative status. */
int py_frame_read(struct pyproc *py, uint64_t frame,
		  const struct py_stack_options *opt, struct py_frame *out,
		  struct cs_err *err);

/* py_frame_read() of a frame whose first n bytes the caller holds
 * already (a generator's, read with it): the same, one read fewer. */
int py_frame_decode(struct pyproc *py, uint64_t frame, const uint8_t *bytes,
		    size_t n, const struct py_stack_options *opt,
		    struct py_frame *out, struct cs_err *err);

/* The raw value of frame f's local `name` (a frame read with its code),
 * cells opened; 0 if none. */
uint64_t py_frame_local(struct pyproc *py, const struct py_frame *f,
			const char *name);

/* The text of frame f's local `name` when it is a str (cached by the
 * pyproc), else NULL. */
const char *py_frame_local_str(struct pyproc *py, const struct py_frame *f,
			       const char *name);

/* The code kind names used in output: "function", "generator", ... */
const char *py_code_kind_name(enum py_code_kind kind);

#endif
