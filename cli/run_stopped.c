#include "cli/run_stopped.h"

#include "cli/escape.h"
#include "cli/report_graph.h"
#include "common/procfs.h"
#include "common/strbuf.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

int run_proc_stopped(const struct run_proc *procs, size_t n, int pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (procs[i].e.pid == pid)
			return procs[i].e.state == 'T';
	return 0;
}

/* "thread 12 at app.py:3 in <module>": where its main thread is, as
 * its graph blames it, when it was dumped. */
static void main_thread_detail(struct run_cause *cause,
			       const struct collection *c, struct strbuf *sb)
{
	long node;
	size_t j;

	for (j = 0; j < c->snap.nthreads; j++)
		if (c->snap.threads[j].tid == c->pid)
			break;
	if (j == c->snap.nthreads)
		return;
	node = py_waitgraph_node_of(&c->graph, WG_THREAD, j);
	if (node < 0 || !c->graph.nodes[node].blame)
		return;
	graph_add_label(sb, c, (size_t)node, GRAPH_RAW);
	graph_add_blame(sb, c, (size_t)node, GRAPH_RAW);
	run_cause_detail(cause, sb);
}

void run_summarize_stopped(struct run_summary *s,
			   const struct run_proc *procs, size_t n)
{
	char comm[PROCFS_COMM_MAX];
	struct run_cause *cause;
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; i < n; i++) {
		if (procs[i].e.state != 'T')
			continue;
		if (procfs_comm(procs[i].e.pid, comm, sizeof(comm)) == 0) {
			esc_add_name_raw(&sb, comm);
			strbuf_addch(&sb, ' ');
		}
		strbuf_addstr(&sb, RUN_STOPPED_WORDS);
		cause = run_cause_add(s, RUN_CAUSE_STOPPED, procs[i].e.pid, &sb);
		if (procs[i].dumped)
			main_thread_detail(cause, &procs[i].c, &sb);
	}
	strbuf_release(&sb);
}
