#include "cli/run_child_places.h"

#include "cli/report_graph.h"
#include "cli/run_causes.h"
#include "cli/run_places.h"
#include "cli/run_pool.h"
#include "cli/run_stopped.h"
#include "common/strbuf.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* Children named under one cause, at most. */
#define CHILDREN_NAMED 4

/* The thread of dumped process pid a place is said of: its main thread
 * (its own innermost frame, else its innermost), else its first with
 * frames; its index, and *c the process's collection; -1 when none or
 * not dumped. */
static long child_thread(const struct run_summary *s, int pid,
			 const struct collection **c)
{
	const struct py_snapshot *snap = NULL;
	size_t j;

	for (j = 0; j < s->nprocs && !snap; j++)
		if (s->procs[j].e.pid == pid && s->procs[j].dumped) {
			*c = &s->procs[j].c;
			snap = &s->procs[j].c.snap;
		}
	for (j = 0; snap && j < snap->nthreads; j++)
		if (snap->threads[j].tid == pid && snap->threads[j].nframes)
			return (long)j;
	for (j = 0; snap && j < snap->nthreads; j++)
		if (snap->threads[j].nframes)
			return (long)j;
	return -1;
}

int run_add_child_places(struct run_cause *cause, const struct run_summary *s,
			 const struct py_waitgraph *g, size_t node,
			 const size_t *sib, size_t n, struct strbuf *sb)
{
	size_t i, added = 0;

	if (!s->procs || node >= g->nnodes || run_pool_result_waits(g, node))
		return 0;
	for (i = 0; i <= n && added < CHILDREN_NAMED; i++) {
		size_t at = i ? sib[i - 1] : node;
		const struct collection *c = NULL;
		const struct py_thread *th;
		const struct py_frame *f;
		const struct py_prim *p;
		long j, tn;

		if (at >= g->nnodes || g->nodes[at].kind != WG_OBJECT)
			continue;
		p = &g->prims[g->nodes[at].index];
		if (p->kind != PY_PRIM_PROCESS || p->pid <= 0 ||
		    run_pool_pid_runs_job(s, p->pid) ||
		    (j = child_thread(s, p->pid, &c)) < 0)
			continue;
		th = &c->snap.threads[j];
		strbuf_addf(sb, "child process %lld: ", (long long)p->pid);
		run_add_thread_label(sb, th);
		/* (where its own code is, as the child's graph says: not a
		 * library's send it is blocked in) */
		tn = py_waitgraph_node_of(&c->graph, WG_THREAD, (size_t)j);
		if (tn >= 0 && c->graph.nodes[tn].blame) {
			graph_add_blame(sb, c, (size_t)tn, GRAPH_RAW);
		} else {
			f = run_causes_own_frame(th);
			strbuf_addstr(sb, " at ");
			run_add_frame_place(sb, f ? f : &th->frames[0]);
		}
		if (run_proc_stopped(s->procs, s->nprocs, p->pid))
			strbuf_addstr(sb, ", " RUN_STOPPED_WORDS);
		run_cause_detail(cause, sb);
		added++;
	}
	return added > 0;
}

