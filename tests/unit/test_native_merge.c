/*
 * readers/native_merge.c on made-up stacks: which Python frames each
 * eval-loop frame stands for, what --native hides, and blocked_in.
 */
#include "readers/native_merge.h"

#include <stdlib.h>
#include <string.h>

#include "tests/unit/check.h"

#define INTERP "/usr/bin/python3.11"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static struct native_frame nf(const char *fn, const char *lib, uint64_t pc,
			      int inlined)
{
	struct native_frame f;

	memset(&f, 0, sizeof(f));
	f.pc = pc;
	f.sym.function = fn;
	f.sym.library = lib;
	f.sym.inlined = inlined;
	return f;
}

/* The merged stack as a string: Python frames as P<index>. */
static void render(const struct merged_frame *m, size_t n,
		   const struct py_frame *py0, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		int w;

		if (m[i].py)
			w = snprintf(buf + used, len - used, "%sP%d",
				     i ? " " : "", (int)(m[i].py - py0));
		else
			w = snprintf(buf + used, len - used, "%s%s",
				     i ? " " : "",
				     m[i].native->sym.function ?
				     m[i].native->sym.function : "??");
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static void test_merge_311(void)
{
	struct native_frame frames[] = {
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("sem_clockwait", LIBC, 2, 0),
		nf("PyThread_acquire_lock_timed", INTERP, 3, 0),
		nf("cfunction_vectorcall_O", INTERP, 4, 0),
		nf("_PyObject_VectorcallTstate", INTERP, 5, 1),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
		nf("_PyFunction_Vectorcall", INTERP, 6, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 7, 0),
		nf("thread_run", INTERP, 8, 0),
		nf("start_thread", LIBC, 9, 0),
	};
	struct py_frame py[3];
	struct native_thread nt = { 1, frames, 10, 1, 0 };
	struct py_thread pt;
	struct merged_frame *m;
	char buf[512];
	size_t n;

	memset(py, 0, sizeof(py));
	memset(&pt, 0, sizeof(pt));
	py[1].entry = 1;     /* P0, P1 run by the inner eval call */
	py[2].entry = 1;     /* P2 by the outer one */
	pt.frames = py;
	pt.nframes = 3;

	native_merge(&pt, &nt, INTERP, 0, &m, &n);
	render(m, n, py, buf, sizeof(buf));
	CHECK(!strcmp(buf, "__futex_abstimed_wait_common sem_clockwait "
		      "PyThread_acquire_lock_timed P0 P1 P2 start_thread"),
	      "--native: %s", buf);
	free(m);

	native_merge(&pt, &nt, INTERP, 1, &m, &n);
	render(m, n, py, buf, sizeof(buf));
	CHECK(!strcmp(buf, "__futex_abstimed_wait_common sem_clockwait "
		      "PyThread_acquire_lock_timed cfunction_vectorcall_O "
		      "_PyObject_VectorcallTstate P0 P1 "
		      "_PyEval_EvalFrameDefault _PyFunction_Vectorcall P2 "
		      "_PyEval_EvalFrameDefault thread_run start_thread"),
	      "--native-all: %s", buf);
	free(m);

	CHECK(!strcmp(native_blocked_in(&nt), "lock"), "blocked_in %s",
	      native_blocked_in(&nt));
}

/* Before 3.11 every Python frame has its own eval call; frames the
 * native stack does not reach go to the outer end. */
static void test_merge_old_and_short(void)
{
	struct native_frame frames[] = {
		nf("epoll_wait", LIBC, 1, 0),
		nf(NULL, "/x/select.so", 2, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 3, 0),
	};
	struct py_frame py[3];
	struct native_thread nt = { 1, frames, 3, 1, 0 };
	struct py_thread pt;
	struct merged_frame *m;
	char buf[256];
	size_t n;

	memset(py, 0, sizeof(py));
	memset(&pt, 0, sizeof(pt));
	py[0].entry = py[1].entry = py[2].entry = 1;
	pt.frames = py;
	pt.nframes = 3;
	native_merge(&pt, &nt, INTERP, 0, &m, &n);
	render(m, n, py, buf, sizeof(buf));
	CHECK(!strcmp(buf, "epoll_wait ?? P0 P1 P2"), "short: %s", buf);
	free(m);
	CHECK(!strcmp(native_blocked_in(&nt), "io"), "io: %s",
	      native_blocked_in(&nt));

	/* no Python at all: every frame stays */
	native_merge(NULL, &nt, INTERP, 0, &m, &n);
	CHECK(n == 3, "C-only thread: %zu frames", n);
	free(m);
}

static void test_blocked_in(void)
{
	struct native_frame gil[] = {
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_timedwait64", LIBC, 2, 0),
		nf("take_gil", INTERP, 3, 0),
		nf("PyEval_RestoreThread", INTERP, 4, 0),
		nf("time_sleep", INTERP, 5, 0),
	};
	struct native_frame sleep_select[] = {
		nf("__GI___select", LIBC, 1, 0),
		nf("time_sleep", INTERP, 2, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 3, 0),
		nf("take_gil", INTERP, 4, 0),  /* beyond the eval loop */
	};
	struct native_frame dropping[] = {  /* its mutex, in drop_gil */
		nf("__lll_lock_wait", LIBC, 1, 0),
		nf("___pthread_mutex_lock", LIBC, 2, 0),
		nf("drop_gil", INTERP, 3, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 4, 0),
	};
	struct native_frame spin[] = {
		nf("_PyEval_EvalFrameDefault", INTERP, 1, 0),
	};
	struct native_frame futex[] = {
		nf("syscall", LIBC, 1, 0),
		nf("futex_wait", "/x/lib.so", 2, 0),
	};
	struct native_frame lockf[] = {  /* fcntl.lockf(): F_SETLKW */
		nf("__GI___libc_fcntl64", LIBC, 1, 0),
		nf("fcntl_lockf_impl", INTERP, 2, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 3, 0),
	};
	struct native_frame unnamed_libc[] = {  /* libc not the core's */
		nf(NULL, LIBC, 1, 0),
	};
	struct native_frame unnamed_interp[] = {  /* stripped, running */
		nf(NULL, INTERP, 1, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 2, 0),
	};
	struct native_thread t = { 1, gil, 5, 1, 0 };

	CHECK(!strcmp(native_blocked_in(&t), "gil"), "gil");
	t.frames = sleep_select;
	t.nframes = 4;
	CHECK(!strcmp(native_blocked_in(&t), "sleep"), "select in time.sleep");
	t.frames = dropping;
	t.nframes = 4;
	CHECK(!strcmp(native_blocked_in(&t), "gil"), "the GIL's mutex: %s",
	      native_blocked_in(&t));
	t.frames = spin;
	t.nframes = 1;
	CHECK(!strcmp(native_blocked_in(&t), "running"), "running");
	t.frames = futex;
	t.nframes = 2;
	CHECK(!strcmp(native_blocked_in(&t), "futex"), "futex");
	t.frames = lockf;
	t.nframes = 3;
	CHECK(!strcmp(native_blocked_in(&t), "file_lock"), "lockf: %s",
	      native_blocked_in(&t));
	t.frames = unnamed_libc;
	t.nframes = 1;
	CHECK(native_blocked_in(&t) == NULL, "unnamed libc: %s",
	      native_blocked_in(&t));
	t.frames = unnamed_interp;
	t.nframes = 2;
	CHECK(native_blocked_in(&t) && !strcmp(native_blocked_in(&t), "running"),
	      "unnamed interpreter frame");
	t.frames = futex;
	t.nframes = 0;
	CHECK(native_blocked_in(&t) == NULL, "no frames");
	/* left running in a write, not unwound */
	t.left_running = 1;
	CHECK(!strcmp(native_blocked_in(&t), "io"), "left running");
}

/* The GIL waited for where the interpreter has no names for its own
 * static functions (Debian's stripped python3: take_gil is "??"). */
static void test_blocked_in_stripped(void)
{
	const char *ext = "/usr/lib/python3/dist-packages/x.so";
	struct native_frame cond[] = {
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_timedwait64", LIBC, 2, 0),
		nf(NULL, INTERP, 3, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 4, 0),
	};
	struct native_frame mutex[] = {
		nf("__lll_lock_wait", LIBC, 1, 0),
		nf("___pthread_mutex_lock", LIBC, 2, 0),
		nf(NULL, INTERP, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame restore[] = {
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_timedwait64", LIBC, 2, 0),
		nf(NULL, INTERP, 3, 0),
		nf("PyEval_RestoreThread", INTERP, 4, 0),
		nf(NULL, INTERP, 5, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 6, 0),
	};
	struct native_frame folded[] = {  /* take_gil inlined into it */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_timedwait64", LIBC, 2, 0),
		nf("PyEval_RestoreThread", INTERP, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame pending[] = { /* 3.13+: the eval breaker */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_timedwait64", LIBC, 2, 0),
		nf(NULL, INTERP, 3, 0),
		nf("_PyThreadState_Attach", INTERP, 4, 0),
		nf("_Py_HandlePending", INTERP, 5, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 6, 0),
	};
	struct native_frame loader[] = {  /* the loader's lock, in dlsym */
		nf("__lll_lock_wait", LIBC, 1, 0),
		nf("___pthread_mutex_lock", LIBC, 2, 0),
		nf("___dlsym", LIBC, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame named[] = {   /* a named caller: a lock */
		nf("__lll_lock_wait", LIBC, 1, 0),
		nf("___pthread_mutex_lock", LIBC, 2, 0),
		nf("PyThread_acquire_lock_timed", INTERP, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame extension[] = {  /* not the interpreter's */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_wait", LIBC, 2, 0),
		nf(NULL, ext, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame no_eval[] = {    /* no eval loop: can't tell */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_wait", LIBC, 2, 0),
		nf(NULL, INTERP, 3, 0),
		nf("start_thread", LIBC, 4, 0),
	};
	struct native_frame sem[] = {        /* a Python lock: semaphores */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("__new_sem_wait_slow64", LIBC, 2, 0),
		nf("sem_clockwait", LIBC, 3, 0),
		nf(NULL, INTERP, 4, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 5, 0),
	};
	struct native_frame direct[] = {     /* nothing between */
		nf("__futex_abstimed_wait_common", LIBC, 1, 0),
		nf("___pthread_cond_wait", LIBC, 2, 0),
		nf("_PyEval_EvalFrameDefault", INTERP, 3, 0),
	};
#define CASE(f, want) { f, sizeof(f) / sizeof(f[0]), want, #f }
	const struct {
		struct native_frame *frames;
		size_t n;
		const char *want, *label;
	} cases[] = {
		CASE(cond, "gil"), CASE(mutex, "gil"), CASE(restore, "gil"),
		CASE(folded, "gil"), CASE(pending, "gil"), CASE(loader, "lock"),
		CASE(named, "lock"), CASE(extension, "futex"),
		CASE(no_eval, "futex"), CASE(sem, "lock"), CASE(direct, "futex"),
	};
#undef CASE
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct native_thread t = { 1, cases[i].frames, cases[i].n, 1,
					     0 };
		const char *got = native_blocked_in(&t);

		CHECK(got && !strcmp(got, cases[i].want), "%s: %s, not %s",
		      cases[i].label, got ? got : "NULL", cases[i].want);
	}
}

int main(void)
{
	test_merge_311();
	test_merge_old_and_short();
	test_blocked_in();
	test_blocked_in_stripped();
	return CHECK_DONE("test_native_merge");
}
