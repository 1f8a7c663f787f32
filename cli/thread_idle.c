#include "cli/thread_idle.h"

#include <string.h>

#include "common/util.h"
#include "readers/usercode.h"
#include "common/banned.h"

static const struct {
	const char *file, *function, *what;
} loops[] = {
	{ "/multiprocessing/pool.py", "worker",
	  "a multiprocessing pool's worker" },
	{ "/multiprocessing/pool.py", "_handle_workers",
	  "a multiprocessing pool's handler thread" },
	{ "/multiprocessing/pool.py", "_handle_tasks",
	  "a multiprocessing pool's handler thread" },
	{ "/multiprocessing/pool.py", "_handle_results",
	  "a multiprocessing pool's handler thread" },
	{ "/concurrent/futures/thread.py", "_worker",
	  "an executor's worker thread" },
	{ "/concurrent/futures/process.py", "_process_worker",
	  "a process pool's worker" },
	{ "/multiprocessing/resource_tracker.py", "main",
	  "multiprocessing's resource tracker" },
	{ "/multiprocessing/forkserver.py", "main",
	  "multiprocessing's fork server" },
};

/* The loop code is, or NULL. */
static const char *loop_of(const struct py_code *code)
{
	size_t k;

	for (k = 0; k < sizeof(loops) / sizeof(loops[0]); k++)
		if (!strcmp(code->name, loops[k].function) &&
		    cs_ends_with(code->filename, loops[k].file))
			return loops[k].what;
	return NULL;
}

const char *thread_idle_by_design(const struct py_thread *t)
{
	const char *what;
	size_t i;

	/* From the innermost frame out, bounded by the thread's frames:
	 * the loop's callers may be the program's (a forked worker keeps
	 * the frames that forked it), what it runs now may not. */
	for (i = 0; i < t->nframes; i++) {
		const struct py_code *code = t->frames[i].code;

		if (!code || !code->filename || !code->name ||
		    py_is_user_file(code->filename, NULL))
			return NULL;
		if ((what = loop_of(code)) != NULL)
			return what;
	}
	return NULL;
}
