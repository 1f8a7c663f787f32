#include "cli/run_pool.h"

#include <stdlib.h>
#include <string.h>

#include "cli/thread_idle.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* Workers named on one cause's line, at most. */
#define POOL_JOBS_NAMED 4

/* Thread t is a process pool's worker running a job (its loop is on
 * its stack, and thread_idle says it is not waiting for the next):
 * concurrent.futures', or a multiprocessing.Pool's. */
static int runs_pool_job(const struct py_thread *t)
{
	size_t i;

	for (i = 0; i < t->nframes; i++)
		if (py_code_is(t->frames[i].code,
			       "/concurrent/futures/process.py",
			       "_process_worker") ||
		    py_code_is(t->frames[i].code, "/multiprocessing/pool.py",
			       "worker"))
			return !thread_idle_by_design(t);
	return 0;
}

size_t run_pool_jobs(const struct run_proc *procs, size_t n, int pid,
		     struct run_pool_job **out)
{
	size_t i, k, njobs = 0, alloc = 0;

	*out = NULL;
	for (i = 0; i < n; i++) {
		const struct collection *c = &procs[i].c;

		if (!procs[i].dumped || procs[i].e.ppid != pid)
			continue;
		for (k = 0; k < c->snap.nthreads; k++) {
			if (!runs_pool_job(&c->snap.threads[k]))
				continue;
			*out = xgrow(*out, &alloc, njobs + 1, sizeof(**out));
			(*out)[njobs].pid = c->pid;
			(*out)[njobs].th = &c->snap.threads[k];
			njobs++;
		}
	}
	return njobs;
}

/* "12 at app.py:9 in crunch": its own code's innermost frame, else its
 * innermost. */
static void add_job(struct strbuf *sb, const struct run_pool_job *job)
{
	const struct py_frame *f = run_causes_own_frame(job->th);

	if (!f && job->th->nframes)
		f = &job->th->frames[0];
	strbuf_addf(sb, "%d", job->pid);
	if (f) {
		strbuf_addstr(sb, " at ");
		run_add_frame_place(sb, f);
	}
}

int run_add_pool_job(struct run_cause *cause, const struct run_summary *s,
		     long node, struct strbuf *sb)
{
	size_t k;

	if (node < 0 || !s->graph || !s->njobs ||
	    py_waitgraph_cfuture_elsewhere(s->graph, (size_t)node) < 0)
		return 0;
	if (s->njobs == 1) {
		strbuf_addstr(sb, "its job runs in process ");
	} else {
		strbuf_addf(sb, "its job runs in one of %zu pool worker "
			    "processes: ", s->njobs);
	}
	for (k = 0; k < s->njobs && k < POOL_JOBS_NAMED; k++) {
		if (k)
			strbuf_addstr(sb, "; ");
		add_job(sb, &s->jobs[k]);
	}
	if (s->njobs > POOL_JOBS_NAMED)
		strbuf_addf(sb, "; and %zu more", s->njobs - POOL_JOBS_NAMED);
	run_cause_detail(cause, sb);
	return 1;
}

int run_add_process_jobs(struct run_cause *cause, const struct run_summary *s,
			 const struct py_waitgraph *g, const size_t *nodes,
			 size_t n, struct strbuf *sb)
{
	size_t i, k, added = 0;

	for (i = 0; i < n && s->njobs; i++) {
		const struct py_prim *p;

		if (nodes[i] >= g->nnodes || g->nodes[nodes[i]].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[nodes[i]].index];
		if (p->kind != PY_PRIM_PROCESS || p->pid <= 0)
			continue;
		for (k = 0; k < s->njobs && added < POOL_JOBS_NAMED; k++) {
			if (s->jobs[k].pid != p->pid)
				continue;
			strbuf_addstr(sb, "pool worker process ");
			add_job(sb, &s->jobs[k]);
			strbuf_addstr(sb, ": a job still running");
			run_cause_detail(cause, sb);
			added++;
		}
	}
	return added > 0;
}
