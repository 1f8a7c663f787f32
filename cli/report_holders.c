#include "cli/report_graph.h"

#include "readers/primitives.h"
#include "readers/usercode.h"
#include "common/banned.h"

/*
 * Who holds an object, as the reports say it: where each holder took it,
 * how sure that is (an RLock that only names a thread ident), and
 * whether the holders can all hold it (a semaphore's) or only one of
 * them can (a lock two `with` blocks entered, one of which released it
 * by hand inside its block).
 */

/* The hold edge holder -> obj that says where (with_at), or any. */
static const struct wg_edge *hold_edge(const struct py_waitgraph *g,
				       size_t obj, size_t holder, int with_at)
{
	size_t k, n;
	const size_t *out = py_waitgraph_out(g, holder, &n);

	for (k = 0; k < n; k++) {
		const struct wg_edge *e = &g->edges[out[k]];

		if (e->kind == WG_HOLDS && e->to == obj && (e->at || !with_at))
			return e;
	}
	return NULL;
}

/* Is f a frame of the program's own code (not a library's)? */
static int user_frame(const struct py_frame *f)
{
	return f && f->code && f->code->filename &&
	       py_is_user_file(f->code->filename, NULL);
}

/*
 * " at PLACE (taken at line N)" of hold e: where its holder entered the
 * holding block.  One a library the program called entered (anyio's and
 * trio's to_thread.run_sync() take their CapacityLimiter) is said where
 * the program's own code is, the holder's blame, and then where the
 * library took it, unless the blame's innermost frame says that.
 */
int graph_hold_in_library(const struct collection *c, const struct wg_edge *e)
{
	const struct wg_node *n = &c->graph.nodes[e->from];

	return e->at && !user_frame(e->at) && user_frame(n->blame) &&
	       n->blame != e->at;
}

static void add_hold_place(struct strbuf *sb, const struct collection *c,
			   const struct wg_edge *e, int with_line,
			   enum graph_names names)
{
	const struct wg_node *n = &c->graph.nodes[e->from];
	int other_line = e->took_line > 0 && e->took_line != e->at->line;

	if (graph_hold_in_library(c, e)) {
		graph_add_blame(sb, c, e->from, names);
		if (n->inner != e->at) {
			strbuf_addstr(sb, " (taken in ");
			graph_add_place_line(sb, e->at, other_line ?
					     e->took_line : e->at->line,
					     names);
			strbuf_addch(sb, ')');
		} else if (other_line) {
			/* (the innermost frame's, said by the blame) */
			strbuf_addf(sb, " (taken at line %d)", e->took_line);
		}
		return;
	}
	strbuf_addstr(sb, " at ");
	graph_add_place(sb, e->at, names);
	if (with_line && other_line)
		strbuf_addf(sb, " (taken at line %d)", e->took_line);
}

void graph_add_holder_at(struct strbuf *sb, const struct collection *c,
			 size_t obj, size_t holder, enum graph_names names)
{
	const struct wg_edge *e = hold_edge(&c->graph, obj, holder, 1);

	if (!e) {
		graph_add_blame(sb, c, holder, names);
		e = hold_edge(&c->graph, obj, holder, 0);
		if (e && e->by_ident)
			strbuf_addstr(sb, GRAPH_BY_IDENT);
		return;
	}
	add_hold_place(sb, c, e, 1, names);
}

const struct py_frame *graph_took_at(const struct collection *c, size_t obj,
				     size_t holder, int *line)
{
	const struct wg_edge *e = hold_edge(&c->graph, obj, holder, 1);

	*line = e ? e->took_line : 0;
	return *line > 0 ? e->at : NULL;
}

/* Hold e's holder where it entered the holding block, else at its
 * blame. */
void graph_add_hold(struct strbuf *sb, const struct collection *c,
		    const struct wg_edge *e, enum graph_names names)
{
	graph_add_label(sb, c, e->from, names);
	if (e->at)
		add_hold_place(sb, c, e, 0, names);
	else
		graph_add_blame(sb, c, e->from, names);
}

/* Can only one hold it at a time? */
static int exclusive(const struct py_prim *p)
{
	return p->kind == PY_PRIM_LOCK || p->kind == PY_PRIM_RLOCK ||
	       p->kind == PY_PRIM_CONDITION || p->kind == PY_PRIM_IMPORT_LOCK;
}

int graph_holders_exclusive(const struct collection *c, size_t obj,
			    size_t nholders)
{
	const struct py_waitgraph *g = &c->graph;

	return nholders > 1 && g->nodes[obj].kind == WG_OBJECT &&
	       exclusive(&g->prims[g->nodes[obj].index]);
}

void graph_add_holders(struct strbuf *sb, const struct collection *c,
		       size_t obj, const size_t *holders, size_t n,
		       size_t max, enum graph_names names)
{
	size_t h;

	for (h = 0; h < n && h < max; h++) {
		if (h)
			strbuf_addstr(sb, ", ");
		else if (graph_holders_exclusive(c, obj, n))
			strbuf_addstr(sb, " held by one of ");
		else
			strbuf_addstr(sb, " held by ");
		graph_add_label(sb, c, holders[h], names);
		graph_add_holder_at(sb, c, obj, holders[h], names);
	}
	if (n > max)
		strbuf_addf(sb, " and %zu more", n - max);
}
