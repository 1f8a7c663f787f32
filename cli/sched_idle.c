#include "cli/sched_idle.h"

#include <string.h>

#include "common/util.h"
#include "readers/code.h"
#include "common/banned.h"

/* The generator's qualname (gi_qualname, also before 3.11, where a
 * code object has only its co_name), in file? */
static int gen_is(const struct py_gen *g, const char *file,
		  const char *qualname)
{
	const char *name = g->qualname ? g->qualname :
			   g->code ? g->code->qualname : NULL;

	return name && g->code && g->code->filename &&
	       !strcmp(name, qualname) &&
	       cs_ends_with(g->code->filename, file);
}

const char *task_idle_by_design(const struct py_async *a,
				const struct py_task *t)
{
	const struct py_gen *outer, *inner;

	if (a->copied_at_fork)
		return "a copy of the parent's task, made by fork";
	/* A server's rest, as run's causes say it (an idle one, cli/
	 * run_serves.c): watch called it stuck. */
	inner = t->nstack ? py_task_gen(a, t, 0) : NULL;
	if (inner && gen_is(inner, "/asyncio/base_events.py",
			    "Server.serve_forever"))
		return "an asyncio server's serve_forever()";
	/* A trio task's own coroutine is the outermost of its chain: a
	 * program's task that calls into trio's core is not one of these. */
	if (!t->framework || strcmp(t->framework, "trio") || !t->nstack)
		return NULL;
	outer = py_task_gen(a, t, t->nstack - 1);
	if (outer && (gen_is(outer, "/trio/_core/_run.py", "Runner.init") ||
		      gen_is(outer, "/trio/_core/_entry_queue.py",
			     "EntryQueue.task")))
		return "trio's system task";
	return NULL;
}

/* Where importlib.resources.as_file()'s generators live: 3.9 and 3.10,
 * 3.11 on, and the importlib_resources backport. */
static const char *const as_file_files[] = {
	"/importlib/_common.py", "/importlib/resources/_common.py",
	"/importlib_resources/_common.py",
};

/* as_file()'s context managers there: for a file on disk, a file in a
 * zip, a directory in a zip (3.12+), and 3.9's as_file itself. */
static const char *const as_file_gens[] = {
	"_", "_tempfile", "_temp_path", "_temp_dir", "as_file",
};

/* Where pytest keeps its machinery (pytest itself, pluggy, which calls
 * its hooks) and where installed plugins live (pytest_asyncio,
 * pytest_timeout, ...: a plugin package is named pytest_ by custom). */
static const char *const pytest_dirs[] = {
	"/_pytest/", "/pluggy/", "/site-packages/pytest_",
	"/dist-packages/pytest_",
};

/* A generator of pytest's machinery parked at its yield while a test
 * runs: a hook wrapper (pluggy resumes it when the hook it wraps
 * returns), a context manager such a wrapper entered, a plugin's
 * fixture (pytest-asyncio's event_loop).  Any generator whose function
 * is named after a hook (pytest_*) is a hook's, a conftest.py's too.
 * Some twenty of them in every pytest run; a stuck test is its thread's
 * or task's, which are listed. */
static int pytest_parked(const struct py_gen *g)
{
	const char *name = g->qualname ? g->qualname :
			   g->code ? g->code->qualname : NULL;
	const char *file = g->code ? g->code->filename : NULL;
	const char *last;
	size_t i;

	if (g->state != PY_GEN_SUSPENDED || !name || !file)
		return 0;
	last = strrchr(name, '.');
	last = last ? last + 1 : name;
	if (!strncmp(last, "pytest_", 7))
		return 1;
	for (i = 0; i < sizeof(pytest_dirs) / sizeof(pytest_dirs[0]); i++)
		if (strstr(file, pytest_dirs[i]))
			return 1;
	return 0;
}

const char *gen_idle_by_design(const struct py_gen *g)
{
	size_t i, k;

	if (gen_is(g, "/trio/_core/_run.py", "unrolled_run"))
		return "trio's run loop";
	/* anyio's worker thread holds it open for its whole life: a stuck
	 * job is its thread's, which is listed */
	if (gen_is(g, "/anyio/_core/_eventloop.py", "claim_worker_thread"))
		return "anyio's worker thread's claim";
	/* 3.6's types module keeps the async generator it takes its type
	 * from (3.7 deletes it): never started, in every program */
	if (gen_is(g, "/types.py", "_ag") && g->state == PY_GEN_CREATED)
		return "the types module's own async generator";
	/* certifi (so every program that imports requests) enters
	 * as_file() at import and keeps the path for good: its generators
	 * stay at their yields for the life of the process.  A `with
	 * as_file()` that is stuck is its thread's or task's, which are
	 * listed. */
	for (i = 0; i < sizeof(as_file_files) / sizeof(as_file_files[0]); i++)
		for (k = 0; k < sizeof(as_file_gens) / sizeof(as_file_gens[0]);
		     k++)
			if (gen_is(g, as_file_files[i], as_file_gens[k]))
				return "importlib.resources.as_file() kept "
				       "open";
	if (pytest_parked(g))
		return "pytest's or a plugin's generator, parked while a test "
		       "runs";
	return NULL;
}

const char *greenlet_idle_by_design(const struct py_greenlet *g)
{
	/* A gevent threadpool's worker thread starts in _begin() on its
	 * own first greenlet, which switches to the worker greenlet for
	 * good: that one runs the jobs (its thread, idle by design while
	 * it waits for one, cli/thread_idle.c) */
	if (g->state == PY_GREENLET_SUSPENDED && g->nframes == 1 &&
	    py_code_is(g->frames[0].code, "/gevent/threadpool.py", "_begin"))
		return "a gevent threadpool worker thread's first greenlet";
	return NULL;
}
