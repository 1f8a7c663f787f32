/*
 * Unit tests for wg_frame_waits_on() (readers/waitgraph_threads.c):
 * which frames of a Thread's, a child process's or another primitive's
 * library count as waiting on it.  Every thread runs in Thread methods
 * and every multiprocessing child in BaseProcess.run(): counting those
 * would show a thread waiting for its own Thread, a child for its own
 * Process.
 */
#include "readers/waitgraph.h"
#include "readers/waitgraph_internal.h"

#include <string.h>

#include "tests/unit/check.h"

static int waits(enum py_prim_kind kind, const char *name, const char *file)
{
	struct wg_build b;
	struct py_prim p;
	struct py_code code;
	struct py_frame f;

	memset(&b, 0, sizeof(b));
	memset(&p, 0, sizeof(p));
	memset(&code, 0, sizeof(code));
	memset(&f, 0, sizeof(f));
	p.kind = kind;
	code.name = name;
	code.qualname = name;
	code.filename = file;
	f.code = &code;
	return wg_frame_waits_on(&b, &p, &f);
}

int main(void)
{
	static const char *const lib = "/usr/lib/python3.12/threading.py";
	static const char *const sp = "/usr/lib/python3.12/subprocess.py";
	static const char *const mp =
		"/usr/lib/python3.12/multiprocessing/process.py";
	static const char *const child_waits[] = {
		"wait", "_wait", "communicate", "_communicate", "__exit__",
	};
	static const char *const not_waits[] = {
		"run", "_bootstrap", "start", "__init__", "_execute_child",
		"poll", NULL,
	};
	size_t i;

	CHECK(waits(PY_PRIM_THREAD, "join", lib), "Thread.join waits");
	for (i = 0; i < 4; i++)
		CHECK(!waits(PY_PRIM_THREAD, not_waits[i], lib),
		      "Thread.%s is no wait", not_waits[i]);
	CHECK(!waits(PY_PRIM_THREAD, "join", "/app/threading_extras.py"),
	      "a join outside threading.py");
	CHECK(!waits(PY_PRIM_THREAD, NULL, lib), "a code with no name");
	for (i = 0; i < sizeof(child_waits) / sizeof(child_waits[0]); i++)
		CHECK(waits(PY_PRIM_PROCESS, child_waits[i], sp),
		      "Popen.%s waits", child_waits[i]);
	CHECK(waits(PY_PRIM_PROCESS, "join", mp), "Process.join waits");
	for (i = 0; not_waits[i]; i++)
		CHECK(!waits(PY_PRIM_PROCESS, not_waits[i], mp),
		      "Process.%s is no wait", not_waits[i]);
	/* the rest: any frame of their library (Queue.get's Condition) */
	CHECK(waits(PY_PRIM_QUEUE, "get", "/usr/lib/python3.12/queue.py"),
	      "Queue.get waits");
	CHECK(waits(PY_PRIM_CONDITION, "wait", lib), "Condition.wait waits");
	return CHECK_DONE("test_waitgraph_threads");
}
