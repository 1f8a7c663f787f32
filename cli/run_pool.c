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
int run_pool_runs_job(const struct py_thread *t)
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

/* Does a thread of process p run multiprocessing's fork server? */
static int forks_for_others(const struct run_proc *p)
{
	const struct py_snapshot *snap = &p->c.snap;
	size_t k, i;

	for (k = 0; p->dumped && k < snap->nthreads; k++)
		for (i = 0; i < snap->threads[k].nframes; i++)
			if (py_code_is(snap->threads[k].frames[i].code,
				       "/multiprocessing/forkserver.py",
				       "main"))
				return 1;
	return 0;
}

/* Was procs[i] started for pid: its child, or (the "forkserver" start
 * method, 3.14's default) a child of pid's fork server? */
static int started_for(const struct run_proc *procs, size_t n, size_t i,
		       int pid)
{
	size_t j;

	if (procs[i].e.ppid == pid)
		return 1;
	for (j = 0; j < n; j++)
		if (procs[j].e.pid == procs[i].e.ppid)
			return procs[j].e.ppid == pid &&
			       forks_for_others(&procs[j]);
	return 0;
}

size_t run_pool_jobs(const struct run_proc *procs, size_t n, int pid,
		     struct run_pool_job **out)
{
	size_t i, k, njobs = 0, alloc = 0;

	*out = NULL;
	for (i = 0; i < n; i++) {
		const struct collection *c = &procs[i].c;

		if (!procs[i].dumped || !started_for(procs, n, i, pid))
			continue;
		for (k = 0; k < c->snap.nthreads; k++) {
			if (!run_pool_runs_job(&c->snap.threads[k]))
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

/* Waiters of a worker process looked at for a pool's result. */
#define POOL_RESULT_LOOKED_AT 8

int run_pool_result_waits(const struct py_waitgraph *g, size_t node)
{
	size_t w[POOL_RESULT_LOOKED_AT], k, n;

	n = py_waitgraph_waiters(g, node, w, POOL_RESULT_LOOKED_AT);
	for (k = 0; k < n && k < POOL_RESULT_LOOKED_AT; k++)
		if (g->nodes[w[k]].kind == WG_OBJECT &&
		    g->prims[g->nodes[w[k]].index].kind == PY_PRIM_POOL_RESULT)
			return 1;
	return 0;
}

int run_pool_pid_runs_job(const struct run_summary *s, int64_t pid)
{
	size_t j;

	for (j = 0; j < s->njobs; j++)
		if (s->jobs[j].pid == pid)
			return 1;
	return 0;
}

/* Was process pid dumped, and does it run no job of s->jobs? */
static int dumped_without_job(const struct run_summary *s, int pid)
{
	size_t j;

	if (run_pool_pid_runs_job(s, pid))
		return 0;
	for (j = 0; j < s->nprocs; j++)
		if (s->procs[j].e.pid == pid)
			return s->procs[j].dumped;
	return 0;
}

int run_add_pool_idle(struct run_cause *cause, const struct run_summary *s,
		      const struct py_waitgraph *g, size_t node,
		      const size_t *sib, size_t n, struct strbuf *sb)
{
	size_t i;

	if (!s->procs || node >= g->nnodes || !run_pool_result_waits(g, node))
		return 0;
	for (i = 0; i <= n; i++) {
		size_t at = i ? sib[i - 1] : node;
		const struct py_prim *p;

		if (at >= g->nnodes || g->nodes[at].kind != WG_OBJECT)
			return 0;
		p = &g->prims[g->nodes[at].index];
		if (p->kind != PY_PRIM_PROCESS || p->pid <= 0 ||
		    !dumped_without_job(s, p->pid))
			return 0;
	}
	strbuf_addstr(sb, "none of these workers runs a job at the dump: a "
		      "job may have been lost (a worker killed while running "
		      "one leaves it so; the pool starts another)");
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

/* "its job runs in thread 12 "pool-0" at app.py:9 in fetch, in C:
 * clock_nanosleep()": the worker thread node's wait leads to, through
 * the graph, where it is (its own code's innermost frame, else its
 * innermost) and the C call it is blocked in, when known. */
int run_add_worker(struct run_cause *cause, const struct py_waitgraph *g,
		   const struct py_snapshot *snap,
		   const struct run_thread_facts *facts, long node,
		   struct addrmap *said, struct strbuf *sb)
{
	const struct py_thread *th;
	const struct py_frame *f;
	long worker;
	size_t i;

	worker = node < 0 ? -1 : py_waitgraph_worker(g, (size_t)node);
	if (worker < 0 || g->nodes[worker].index >= snap->nthreads)
		return 0;
	i = g->nodes[worker].index;
	th = &snap->threads[i];
	strbuf_addstr(sb, "its job runs in ");
	run_add_thread_label(sb, th);
	f = run_causes_own_frame(th);
	if (!f && th->nframes)
		f = &th->frames[0];
	if (f) {
		strbuf_addstr(sb, " at ");
		run_add_frame_place(sb, f);
	}
	if (facts && facts[i].native_call)
		strbuf_addf(sb, ", in C: %s()", facts[i].native_call);
	run_cause_detail(cause, sb);
	if (said && th->tstate)
		addrmap_put(said, th->tstate, NULL);
	return 1;
}
