#include "cli/collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach/live.h"
#include "cli/source.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/trio.h"
#include "common/banned.h"

/* Writable memory copied whole during the stop, at most. */
#define CAPTURE_MAX_BYTES ((size_t)512 << 20)

/* Give the library's message the context only the command knows. */
static void explain_live(struct cs_err *err, struct memsrc *ms, int pid)
{
	char comm[PROCFS_COMM_MAX];

	/* A process that went away mid-read fails in any way at all (its
	 * files and memory vanish): say what happened, not what failed. */
	if (ms && err->code != CS_ERR_EXITED && !live_alive(ms)) {
		cs_refail(err, CS_ERR_EXITED,
			  "process %d exited while being read", pid);
	} else if (err->code == CS_ERR_NOT_PYTHON && ms) {
		procfs_comm(pid, comm, sizeof(comm));
		cs_err_prefix(err, "process %d (%s) is not a Python process",
			      pid, comm);
	}
}

/*
 * Thread ids as coroscope sees them.  CPython records the tid its
 * thread got from gettid(), which in another PID namespace is that
 * namespace's (1, 2, ...); the source's thread list has both.  An id
 * that is one of the target's tids as we see them is kept (it came from
 * a thread's registers); one that is only a namespace tid is mapped.
 */
static void map_thread_ids(struct collection *c)
{
	const struct memsrc *ms = c->ms;
	size_t i, k;

	if (!c->snap.nthreads)
		return;
	c->ns_tids = xcalloc(c->snap.nthreads, sizeof(*c->ns_tids));
	for (i = 0; i < c->snap.nthreads; i++) {
		struct py_thread *t = &c->snap.threads[i];
		int host = 0;

		for (k = 0; k < ms->nthreads && t->tid > 0; k++)
			if (ms->threads[k].tid == t->tid)
				host = 1;
		for (k = 0; k < ms->nthreads && t->tid > 0; k++) {
			const struct cs_thread *th = &ms->threads[k];

			if (host && th->tid == t->tid) {
				c->ns_tids[i] = th->ns_tid;
				break;
			}
			if (!host && th->ns_tid == t->tid) {
				c->ns_tids[i] = th->ns_tid;
				t->tid = th->tid;
				break;
			}
		}
	}
}

/*
 * Tasks, generators, greenlets and trio tasks, from one heap walk.  The
 * thread stacks stand on their own: a heap that cannot be walked (a racy
 * --no-block read, a corrupt list) costs only these, with a warning.
 */
static void collect_heap(struct collection *c,
			 const struct py_stack_options *sopt)
{
	struct py_greenlet_scan gscan;
	struct py_trio_scan tscan;
	struct py_gc_visit also[2];
	struct cs_err err;
	size_t nalso = 0;
	int gl, walked;

	cs_err_init(&err);
	gl = py_greenlets_prepare(&c->py, &gscan, &also[nalso], &err);
	if (gl < 0)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"greenlets not shown: %.400s", err.msg);
	nalso += gl > 0;
	nalso += (size_t)py_trio_prepare(&c->py, &tscan, &also[nalso]);
	cs_err_init(&err);
	walked = py_async_take_with(&c->py, &c->snap, sopt, also, nalso,
				    &c->async, &err) == 0;
	if (!walked)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"tasks and generators%s%s not shown: %.400s",
			gl > 0 ? ", greenlets" : "",
			tscan.task_type ? ", trio tasks" : "", err.msg);
	else if (cs_err_init(&err),
		 py_trio_finish(&tscan, &c->snap, &c->async, &err) < 0)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"trio tasks not shown: %.400s", err.msg);
	cs_err_init(&err);
	if (walked && gl > 0 &&
	    py_greenlets_finish(&gscan, &c->snap, sopt, &c->greenlets,
				&err) < 0)
		cs_warn(&c->warnings, CS_WARN_COLLECTION,
			"greenlets not shown: %.400s", err.msg);
	py_trio_scan_release(&tscan);
	py_greenlet_scan_release(&gscan);
}

static int collect(struct collection *c, const struct collect_options *opt,
		   double start, struct cs_err *err)
{
	struct py_stack_options sopt;
	int ret;

	c->opt = *opt;
	if (!opt->no_source)
		c->sources = source_cache_new(c->ms, c->is_live ? c->pid : 0);
	ret = pyproc_locate(&c->py, c->ms, err);
	c->located = 1;
	/* Room for the reads, while the time it takes is not the target's
	 * (only a target about to be stopped waits for it). */
	if (ret == 0 && c->is_live && !opt->no_block)
		memsrc_prepare(c->ms, 1);
	if (ret == 0 && c->is_live && !opt->no_block) {
		live_install_signal_guard();
		ret = live_stop(c->ms, err);
		/* Copy what the target can change and let it run on at once;
		 * a target too large to copy stays stopped while we read. */
		if (ret == 0) {
			/* test aid: exercise the stay-stopped path */
			const char *nocap = getenv("COROSCOPE_TEST_NO_CAPTURE");
			size_t max = nocap && *nocap == '1' ? 0 : CAPTURE_MAX_BYTES;

			ret = memsrc_capture(c->ms, max, err);
			if (ret == 1) {
				live_resume(c->ms);
				ret = 0;
			}
		}
	}
	if (ret == 0) {
		memset(&sopt, 0, sizeof(sopt));
		sopt.locals = opt->locals;
		sopt.max_frames = opt->max_frames;
		c->py.repr_max_items = (size_t)opt->max_items;
		ret = py_snapshot_take(&c->py, &sopt, &c->snap, err);
		if (ret == 0)
			map_thread_ids(c);
	}
	/* From the registers and stacks copied at the stop: the target may
	 * already run on. */
	if (ret == 0 && opt->native) {
		struct cs_err nerr;

		/* Like the tasks: native stacks that cannot be unwound cost
		 * only themselves, with a warning. */
		cs_err_init(&nerr);
		if (native_stacks_take(&c->native, c->ms, &nerr) < 0)
			cs_warn(&c->warnings, CS_WARN_COLLECTION,
				"native frames not shown: %.400s", nerr.msg);
	}
	if (ret == 0) {
		struct cs_err aerr;

		collect_heap(c, &sopt);
		cs_err_init(&aerr);
		if (py_waitgraph_build(&c->py, &c->snap, &c->async, &c->graph,
				       &aerr) < 0)
			cs_warn(&c->warnings, CS_WARN_COLLECTION,
				"what waits for what not shown: %.400s",
				aerr.msg);
	}
	if (c->is_live) {
		live_resume(c->ms);
		c->pause_ms = live_paused_ms(c->ms);
	}
	c->wall_ms = cs_now_ms() - start;
	return ret;
}

/* One collection of a live process. */
static int collect_live_once(struct collection *c, int pid,
			     const struct collect_options *opt,
			     struct cs_err *err)
{
	double start = cs_now_ms();
	int ret;

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->asked_pid = pid;
	c->is_live = 1;
	ret = live_open(&c->ms, pid, err);
	if (ret < 0)
		return ret;
	/* The thread group: live_open() takes a thread id to mean it. */
	c->pid = c->ms->pid;
	c->ns_pid = c->ms->ns_pid;
	c->command = live_cmdline(c->pid);
	ret = collect(c, opt, start, err);
	if (ret < 0)
		explain_live(err, c->ms, c->pid);
	return ret;
}

/*
 * Did a --no-block read fail because the running target changed under
 * it (a pointer followed after its object was freed or moved)?  The
 * same read of a stopped target would not have failed.
 */
static int changed_under_us(const struct collection *c,
			    const struct collect_options *opt,
			    const struct cs_err *err)
{
	return opt->no_block && c->ms && err->code == CS_ERR_MEMORY &&
	       live_alive(c->ms);
}

int collect_live(struct collection *c, int pid,
		 const struct collect_options *opt, struct cs_err *err)
{
	int retries = opt->retries ? opt->retries : COLLECT_DEFAULT_RETRIES;
	int attempt, ret;

	if (retries < 0 || !opt->no_block)
		retries = 0;
	if (retries > COLLECT_MAX_RETRIES)
		retries = COLLECT_MAX_RETRIES;
	/* Bounded: one more try per retry, each a whole new collection. */
	for (attempt = 0; ; attempt++) {
		ret = collect_live_once(c, pid, opt, err);
		c->attempts = attempt + 1;
		if (ret == 0 || !changed_under_us(c, opt, err))
			break;
		if (attempt == retries) {
			cs_err_prefix(err, "the target changed while being "
				      "read (--no-block; %d tries); try again "
				      "or drop --no-block", attempt + 1);
			break;
		}
		collection_release(c);
		cs_err_init(err);
	}
	if (ret == 0 && c->asked_pid != c->pid)
		fprintf(stderr, "coroscope: note: %d is a thread of process %d; "
			"showing the process\n", c->asked_pid, c->pid);
	return ret;
}

int collect_source(struct collection *c, struct memsrc *ms,
		   const struct collect_options *opt, struct cs_err *err)
{
	struct cs_warnings kept = c->warnings;

	memset(c, 0, sizeof(*c));
	c->warnings = kept;
	c->ms = ms;
	c->pid = ms->pid;
	c->asked_pid = ms->pid;
	c->ns_pid = ms->ns_pid ? ms->ns_pid : ms->pid;
	c->attempts = 1;
	return collect(c, opt, cs_now_ms(), err);
}

void collection_init(struct collection *c)
{
	memset(c, 0, sizeof(*c));
	cs_warnings_init(&c->warnings);
}

void collection_release(struct collection *c)
{
	source_cache_free(c->sources);
	native_stacks_release(&c->native);
	py_waitgraph_release(&c->graph);
	py_async_release(&c->async);
	py_greenlets_release(&c->greenlets);
	py_snapshot_release(&c->snap);
	if (c->located)
		pyproc_release(&c->py);
	if (c->ms)
		memsrc_free(c->ms);
	free(c->command);
	free(c->ns_tids);
	cs_warnings_release(&c->warnings);
	collection_init(c);
}
