#include "cli/run_graph.h"

#include <stdlib.h>
#include <string.h>

#include "cli/escape.h"
#include "cli/report_graph.h"
#include "common/banned.h"

static void add_unit_detail(struct run_cause *cause,
			    const struct collection *c, size_t node,
			    struct strbuf *sb)
{
	graph_add_label(sb, c, node);
	graph_add_blame(sb, c, node);
	run_cause_detail(cause, sb);
}

static void add_test(struct run_cause *cause, const struct collection *c,
		     struct strbuf *sb)
{
	if (!c->graph.test)
		return;
	strbuf_addstr(sb, "test being run: ");
	esc_add(sb, c->graph.test, ESC_TEXT, 0);
	run_cause_detail(cause, sb);
}

static int has_object(const struct py_waitgraph *g, size_t cycle)
{
	size_t k;

	for (k = 0; k < g->cycles.len[cycle]; k++)
		if (g->nodes[g->cycles.cycles[cycle][k]].kind == WG_OBJECT)
			return 1;
	return 0;
}

static void cycles(struct run_summary *s, const struct collection *c,
		   struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i, k;

	for (i = 0; i < g->cycles.n; i++) {
		struct run_cause *cause;

		/* Tasks awaiting each other are await cycles already. */
		if (!has_object(g, i))
			continue;
		strbuf_addstr(sb, "lock cycle: ");
		graph_add_cycle(sb, c, i);
		cause = run_cause_add(s, RUN_CAUSE_LOCK_CYCLE, c->pid, sb);
		for (k = 0; k < g->cycles.len[i]; k++) {
			size_t node = g->cycles.cycles[i][k];

			if (g->nodes[node].kind == WG_OBJECT)
				continue;
			graph_add_label(sb, c, node);
			graph_add_blame(sb, c, node);
			strbuf_addstr(sb, " ");
			graph_add_wait(sb, c, node);
			run_cause_detail(cause, sb);
		}
		add_test(cause, c, sb);
	}
}

struct ranked {
	size_t node, waiters, idle;
};

static int by_waiters(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->waiters != y->waiters)
		return x->waiters < y->waiters ? 1 : -1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* Is node part of a cycle through locks (reported as such already)? */
static int in_lock_cycle(const struct py_waitgraph *g, size_t node)
{
	size_t i, k;

	for (i = 0; i < g->cycles.n; i++)
		for (k = 0; has_object(g, i) && k < g->cycles.len[i]; k++)
			if (g->cycles.cycles[i][k] == node)
				return 1;
	return 0;
}

static void held(struct run_summary *s, const struct collection *c,
		 struct strbuf *sb)
{
	const struct py_waitgraph *g = &c->graph;
	struct ranked *r = xcalloc(g->nnodes + 1, sizeof(*r));
	size_t i, k, n = 0, *w;

	w = xcalloc(g->nnodes + 1, sizeof(*w));
	for (i = 0; i < g->nnodes; i++) {
		size_t nw;

		/* A gather or concurrent future is not a cause: what it
		 * waits for is. */
		if (g->nodes[i].kind != WG_OBJECT || in_lock_cycle(g, i) ||
		    py_prim_is_future(&g->prims[g->nodes[i].index]))
			continue;
		nw = py_waitgraph_waiters(g, i, w, g->nnodes);
		if (!nw)
			continue;
		r[n].node = i;
		r[n].waiters = nw;
		for (k = 0; k < nw; k++)
			r[n].idle += g->nodes[w[k]].idle;
		n++;
	}
	qsort(r, n, sizeof(*r), by_waiters);
	for (i = 0; i < n; i++) {
		const struct py_prim *p = &g->prims[g->nodes[r[i].node].index];
		size_t nh, nw, h, holders[4];
		int idle = r[i].idle == r[i].waiters;
		struct run_cause *cause;

		if (idle)
			strbuf_addstr(sb, "idle: ");
		strbuf_addf(sb, "%zu waiting on ", r[i].waiters);
		graph_add_label(sb, c, r[i].node);
		nh = py_waitgraph_holders(g, r[i].node, holders, 4);
		for (h = 0; h < nh && h < 4; h++) {
			size_t k2;

			strbuf_addstr(sb, h ? ", " : " held by ");
			graph_add_label(sb, c, holders[h]);
			/* The line that entered the block, else its blame. */
			for (k2 = 0; k2 < g->nedges; k2++)
				if (g->edges[k2].kind == WG_HOLDS &&
				    g->edges[k2].from == holders[h] &&
				    g->edges[k2].to == r[i].node &&
				    g->edges[k2].at)
					break;
			if (k2 < g->nedges) {
				strbuf_addstr(sb, " at ");
				graph_add_place(sb, g->edges[k2].at);
			} else {
				graph_add_blame(sb, c, holders[h]);
			}
		}
		if (nh > 4)
			strbuf_addf(sb, " and %zu more", nh - 4);
		if (!nh && py_prim_is_lock(p))
			strbuf_addstr(sb, ", holder unknown");
		cause = run_cause_add(s, idle ? RUN_CAUSE_IDLE : RUN_CAUSE_HELD,
				      c->pid, sb);
		/* Holders first (where they are stuck themselves), then
		 * every waiter: no cap. */
		for (h = 0; h < nh && h < 4; h++) {
			strbuf_addstr(sb, "holder ");
			graph_add_label(sb, c, holders[h]);
			graph_add_blame(sb, c, holders[h]);
			run_cause_detail(cause, sb);
		}
		nw = py_waitgraph_waiters(g, r[i].node, w, g->nnodes);
		for (k = 0; k < nw && k < g->nnodes; k++)
			add_unit_detail(cause, c, w[k], sb);
		if (!idle)
			add_test(cause, c, sb);
	}
	free(w);
	free(r);
}

/* Does the task at addr wait for a primitive the graph knows, or wait
 * in a server's idle state?  Then its "stuck task" cause (a task parked
 * on a bare future) says less than the graph's and is dropped. */
static int explained(const struct collection *c, uint64_t addr)
{
	const struct py_waitgraph *g = &c->graph;
	size_t i;

	for (i = 0; i < g->nedges; i++) {
		const struct wg_node *n = &g->nodes[g->edges[i].from];

		if (g->edges[i].kind == WG_WAITS_FOR && n->kind == WG_TASK &&
		    c->async.tasks[n->index].addr == addr &&
		    (n->idle || g->nodes[g->edges[i].to].kind == WG_OBJECT))
			return 1;
	}
	return 0;
}

void run_summarize_graph(struct run_summary *s, const struct collection *c)
{
	struct strbuf sb;
	size_t i;

	for (i = s->n; i-- > 0;)
		if (s->causes[i].kind == RUN_CAUSE_STUCK_TASK &&
		    s->causes[i].pid == c->pid && s->causes[i].subject &&
		    explained(c, s->causes[i].subject))
			run_cause_drop(s, i);

	strbuf_init(&sb);
	cycles(s, c, &sb);
	held(s, c, &sb);
	strbuf_release(&sb);
}
