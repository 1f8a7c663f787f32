#include "readers/native_merge.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/banned.h"

/* Frames looked at for native_blocked_in(), from the innermost. */
#define BLOCKED_SCAN 32

int native_is_eval_frame(const struct native_frame *f)
{
	return f->sym.function && !f->sym.inlined &&
	       !strcmp(f->sym.function, "_PyEval_EvalFrameDefault");
}

static int has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/*
 * The interpreter's calling machinery: how one Python frame reaches a C
 * function or the next eval loop.  Everything else in the interpreter
 * (time_sleep, os_read_impl, lock_PyThread_acquire_lock, take_gil ...)
 * is a function Python called and stays.
 */
static int is_plumbing(const char *name)
{
	static const char *const prefixes[] = {
		"_PyEval_", "PyEval_", "_PyObject_Call", "_PyObject_Vectorcall",
		"_PyObject_FastCall", "_PyObject_MakeTpCall", "PyObject_Call",
		"PyObject_Vectorcall", "_PyFunction_", "PyVectorcall_",
		"_PyVectorcall_", "cfunction_", "method_vectorcall",
		"_PyCFunction_", "PyCFunction_", "vectorcall_", "call_function",
		"do_call_core", "slot_tp_", "function_code_fastcall",
		"_PyMethodDef_", "method_call", "wrapper_call", "wrapperdescr_",
		"methoddescr_", "_PyMethodDescr_", "classmethoddescr_",
		"fast_function", "_Py_call", "object_vacall", "callmethod",
		"_Py_CheckFunctionResult", "_PyEval_EvalCode", "partial_call",
		"partial_vectorcall", "bounded_lru_cache_wrapper",
		"lru_cache_call", "_PyObject_VectorcallTstate",
		"PyObject_VectorcallMethod", "_PyObject_CallMethod",
		"method_vectorcall_", "_PyFunction_Vectorcall", "_Py_Vectorcall",
		"context_run", "builtin_exec",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (has_prefix(name, prefixes[i]))
			return 1;
	return 0;
}

static int in_interp(const struct native_frame *f, const char *interp)
{
	return interp && f->sym.library && !strcmp(f->sym.library, interp);
}

/*
 * Shown without --native-all?  in_python: the frame is between Python
 * frames or called by them (not below the outermost one).
 */
static int shown(const struct native_frame *f, const char *interp,
		 int in_python, int under_eval)
{
	if (!in_interp(f, interp))
		return 1;
	/* main(), Py_RunMain, thread_run ...: what started Python */
	if (!in_python)
		return 0;
	/* inlined into the eval loop: its own helpers */
	if (under_eval)
		return 0;
	if (!f->sym.function)
		return 1;
	return !is_plumbing(f->sym.function);
}

void native_merge(const struct py_thread *pt, const struct native_thread *nt,
		  const char *interp, int all, struct merged_frame **out,
		  size_t *n)
{
	size_t np = pt ? pt->nframes : 0, nn = nt ? nt->nframes : 0;
	size_t i, k, p = 0, m = 0;
	struct merged_frame *r = xcalloc(np + nn + 1, sizeof(*r));

	for (i = 0; i < nn; i++) {
		const struct native_frame *f = &nt->frames[i];
		int under_eval = 0;

		if (native_is_eval_frame(f)) {
			/* the Python frames this call runs, innermost first */
			for (; p < np; p++) {
				r[m++].py = &pt->frames[p];
				if (pt->frames[p].entry) {
					p++;
					break;
				}
			}
			if (all || !np)
				r[m++].native = f;
			continue;
		}
		/* an inlined frame whose real function is the eval loop */
		for (k = i; k < nn && nt->frames[k].sym.inlined &&
		     nt->frames[k].pc == f->pc; k++)
			;
		if (k < nn && k != i && nt->frames[k].pc == f->pc &&
		    native_is_eval_frame(&nt->frames[k]))
			under_eval = 1;
		if (all || !np || shown(f, interp, p < np, under_eval))
			r[m++].native = f;
	}
	for (; p < np; p++)
		r[m++].py = &pt->frames[p];
	*out = r;
	*n = m;
}

/* "__GI___libc_read" -> "read": glibc's internal aliases of one call. */
static const char *base_name(const char *s)
{
	for (;;) {
		while (*s == '_')
			s++;
		if (has_prefix(s, "GI_"))
			s += 3;
		else if (has_prefix(s, "libc_"))
			s += 5;
		else
			return s;
	}
}

static int name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return 1;
	return 0;
}

/*
 * Waiting for the GIL where the interpreter has no symbols for its own
 * static functions (Debian's stripped python3: take_gil has no name).
 * The GIL is the interpreter's one user of raw pthread mutexes and
 * condition variables (its locks are semaphores, and PyMutex has an
 * exported name), so: the thread waits in one of those, called by
 * unnamed frames of the interpreter only (take_gil, and what LTO folded
 * into it) up to the eval loop, or by none or such up to one of the
 * exported functions that take or drop it.  The interpreter is the
 * eval loop's module: frames[eval], the first eval loop frame
 * native_blocked_in() met (it tells nothing without one).
 */
static int unnamed_gil_wait(const struct native_thread *nt, size_t eval)
{
	static const char *const raw[] = {
		"pthread_mutex_lock", "pthread_mutex_cond_lock",
		"pthread_cond_wait", "pthread_cond_timedwait",
		"pthread_cond_timedwait64", "pthread_cond_clockwait",
		"pthread_cond_clockwait64", NULL,
	};
	/* Exported functions whose raw pthread waits, take_gil or
	 * drop_gil folded in or called, are the GIL's (3.13+ reach
	 * take_gil from the eval loop through the first two). */
	static const char *const entries[] = {
		"_Py_HandlePending", "_PyThreadState_Attach",
		"PyEval_RestoreThread", "PyEval_AcquireThread",
		"PyEval_AcquireLock", "PyGILState_Ensure", "PyEval_SaveThread",
		"PyEval_ReleaseThread", "_Py_read", "_Py_write", NULL,
	};
	const char *wait_lib = nt->frames[0].sym.library,
		   *interp = nt->frames[eval].sym.library;
	size_t i, unnamed = 0;

	if (!wait_lib || !interp || !strcmp(wait_lib, interp))
		return 0;
	/* The wait's own frames (the C library's), innermost first; the
	 * outermost, the one the interpreter called, must be the raw wait
	 * (not, say, dlsym() waiting for the loader's lock). */
	for (i = 0; i < eval && nt->frames[i].sym.library &&
	     !strcmp(nt->frames[i].sym.library, wait_lib); i++)
		;
	if (i == 0 || !nt->frames[i - 1].sym.function ||
	    !name_in(base_name(nt->frames[i - 1].sym.function), raw))
		return 0;
	/* Then only the interpreter's unnamed frames. */
	for (; i < eval; i++) {
		const struct native_frame *f = &nt->frames[i];

		if (!f->sym.library || strcmp(f->sym.library, interp))
			return 0;
		/* An exported way in, with take_gil folded into it or not. */
		if (f->sym.function)
			return name_in(f->sym.function, entries);
		unnamed++;
	}
	return unnamed > 0;
}

/* The C functions native_blocked_in() reads a wait into, by kind. */
static const char *const in_lock[] = {
	"PyThread_acquire_lock_timed", "PyThread_acquire_lock",
	"acquire_timed", "lock_PyThread_acquire_lock", "rlock_acquire",
	"_PyMutex_LockTimed", "_PyMutex_LockSlow", "PyMutex_Lock",
	"pthread_mutex_lock", "pthread_mutex_timedlock",
	"___pthread_mutex_lock", "sem_wait", "sem_timedwait",
	"sem_clockwait", "do_futex_wait", "_PyEvent_Wait",
	"PyEvent_WaitTimed", NULL,
};
static const char *const in_sleep[] = {
	"nanosleep", "clock_nanosleep", "pysleep", "time_sleep",
	"usleep", "sleep", NULL,
};
static const char *const in_io[] = {
	"read", "write", "readv", "writev", "pread64", "pwrite64",
	"recv", "recvfrom", "recvmsg", "send", "sendto", "sendmsg",
	"accept", "accept4", "connect", "poll", "ppoll", "select",
	"pselect", "pselect6", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "open", "open64", "openat", "openat64",
	"wait4", NULL,
};
/* a file's lock (fcntl.flock(), fcntl.lockf()): fcntl(2) blocks
 * only so, where a thread stays */
static const char *const in_file_lock[] = {
	"flock", "fcntl", "fcntl64", "lockf", "lockf64", NULL,
};
static const char *const in_wait[] = {
	"pause", "sigsuspend", "sigwait", "sigwaitinfo",
	"sigtimedwait", "waitpid", "waitid", NULL,
};
/* queue.SimpleQueue.get(), which waits on a lock (a parking lot
 * from 3.13) of its own: a queue's wait, not a lock's (names as
 * base_name() leaves them) */
static const char *const in_queue[] = {
	"queue_SimpleQueue_get_impl", "queue_SimpleQueue_get", NULL,
};

/*
 * Whether a thread found in no wait can be said to be running: not if
 * the frame it stands in has no name outside the interpreter (a C
 * library whose copy does not match the core's, without its symbols or
 * unwind tables: the unwind stops there, and its system call is not
 * known).  The interpreter's own unnamed frames (Debian's stripped
 * python3) run its code: its waits go through the C library.
 */
static int innermost_known(const struct native_thread *nt, size_t eval)
{
	const struct native_frame *f = &nt->frames[0];

	if (f->sym.function)
		return 1;
	return eval != SIZE_MAX && f->sym.library &&
	       nt->frames[eval].sym.library &&
	       !strcmp(f->sym.library, nt->frames[eval].sym.library);
}

/* native_blocked_in() of an unwound thread. */
static const char *blocked_in_frames(const struct native_thread *nt)
{
	/* Found anywhere before the eval loop: the stronger meaning wins
	 * (time.sleep() sleeps in select() on 3.6 - 3.10: "sleep", not
	 * "io"; a lock waits in a futex: "lock"). */
	enum {
		NONE, FUTEX, IO, WAIT, FILE_LOCK, SLEEP, LOCK, QUEUE, GIL
	} best = NONE;
	static const char *const words[] = {
		"running", "futex", "io", "wait", "file_lock", "sleep", "lock",
		"queue", "gil",
	};
	size_t i, eval = SIZE_MAX;  /* the eval loop's frame, if met */

	if (!nt || !nt->nframes)
		return NULL;
	for (i = 0; i < nt->nframes && i < BLOCKED_SCAN; i++) {
		const struct native_frame *f = &nt->frames[i];
		const char *name;
		int kind = NONE;

		if (native_is_eval_frame(f)) {
			eval = i;
			break;
		}
		if (!f->sym.function)
			continue;
		name = base_name(f->sym.function);
		/* drop_gil takes the GIL's mutex too, and waits there for
		 * another thread to take the GIL when it forces a switch:
		 * a spinner caught in it waits on the GIL, not a lock. */
		if (!strcmp(name, "take_gil") || !strcmp(name, "drop_gil"))
			kind = GIL;
		else if (name_in(name, in_lock) ||
			 name_in(f->sym.function, in_lock))
			kind = LOCK;
		else if (name_in(name, in_queue))
			kind = QUEUE;
		else if (name_in(name, in_sleep))
			kind = SLEEP;
		else if (name_in(name, in_wait))
			kind = WAIT;
		else if (name_in(name, in_file_lock))
			kind = FILE_LOCK;
		else if (name_in(name, in_io))
			kind = IO;
		else if (strstr(name, "futex"))
			kind = FUTEX;
		if (kind > (int)best)
			best = kind;
	}
	if ((best == LOCK || best == FUTEX) && eval != SIZE_MAX &&
	    unnamed_gil_wait(nt, eval))
		best = GIL;
	if (best == NONE && !innermost_known(nt, eval))
		return NULL;
	return words[best];
}

const char *native_blocked_in(const struct native_thread *nt)
{
	/* (not unwound: it was left asleep in a write, not stopped) */
	if (nt && nt->left_running)
		return "io";
	return blocked_in_frames(nt);
}
