#include "cli/run_queue_join.h"

#include <string.h>

#include "cli/report_graph.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "readers/waitgraph.h"
#include "common/banned.h"

/* Is f a queue's join(), threading's or asyncio's? */
static int is_join(const struct py_frame *f)
{
	return f && f->code &&
	       (py_code_is(f->code, "/queue.py", "join") ||
		py_code_is(f->code, "/asyncio/queues.py", "join"));
}

/* Is unit node n of c's graph in a queue's join()?  Its innermost
 * frames, up to the first of the program's own. */
static int in_join(const struct collection *c, size_t n)
{
	const struct wg_node *nd = &c->graph.nodes[n];
	size_t k;

	if (nd->kind == WG_THREAD && nd->index < c->snap.nthreads) {
		const struct py_thread *t = &c->snap.threads[nd->index];

		for (k = 0; k < t->nframes && k < 8; k++)
			if (is_join(&t->frames[k]))
				return 1;
	} else if (nd->kind == WG_TASK && nd->index < c->async.ntasks) {
		const struct py_task *t = &c->async.tasks[nd->index];

		for (k = 0; k < t->nstack && k < 8; k++) {
			const struct py_gen *g = py_task_gen(&c->async, t, k);

			if (g && g->has_frame && is_join(&g->frame))
				return 1;
		}
	}
	return 0;
}

void run_queue_join_detail(struct run_cause *cause,
			   const struct collection *c, size_t node,
			   struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	const struct py_prim *p;
	size_t w[QUEUE_JOIN_WAITERS], nw, k;
	long long taken;

	if (node >= g->nnodes || g->nodes[node].kind != WG_OBJECT)
		return;
	p = &g->prims[g->nodes[node].index];
	if (p->kind != PY_PRIM_QUEUE || p->qsize < 0 || p->unfinished < 0 ||
	    p->unfinished <= p->qsize)
		return;
	taken = (long long)(p->unfinished - p->qsize);
	nw = py_waitgraph_waiters(g, node, w, QUEUE_JOIN_WAITERS);
	for (k = 0; k < nw && k < QUEUE_JOIN_WAITERS; k++) {
		if (!in_join(c, w[k]))
			continue;
		strbuf_addf(sb, "join() waits for %lld item%s a get() took and "
			    "no task_done() marked: ", taken,
			    taken == 1 ? "" : "s");
		graph_add_label(sb, c, w[k], GRAPH_RAW);
		graph_add_blame(sb, c, w[k], GRAPH_RAW);
		run_cause_detail(cause, sb);
		return;
	}
}
