#include "readers/cycles.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "common/banned.h"

#define UNSEEN SIZE_MAX

/* The state of one search; every array has g->n entries. */
struct tarjan {
	const struct cycle_graph *g;
	size_t *index, *low;   /* discovery order, lowest reachable index */
	char *on_stack;
	size_t *stack, sp;     /* nodes of the components not yet closed */
	size_t *work, *edge;   /* the DFS: node and its next edge to try */
	size_t *comp;          /* component number + 1 of closed nodes */
	size_t *walked;        /* component number + 1 once on a named path */
	size_t *path, *cursor; /* the path being named and its edge cursors */
	size_t counter, ncomp;
};

void cycle_list_init(struct cycle_list *l)
{
	memset(l, 0, sizeof(*l));
}

void cycle_list_release(struct cycle_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->cycles[i]);
	free(l->cycles);
	free(l->len);
	cycle_list_init(l);
}

static void add_cycle(struct cycle_list *l, const size_t *path, size_t len)
{
	size_t alloc = l->alloc;

	l->cycles = xgrow(l->cycles, &l->alloc, l->n + 1, sizeof(*l->cycles));
	l->len = xgrow(l->len, &alloc, l->n + 1, sizeof(*l->len));
	l->cycles[l->n] = xmalloc((len ? len : 1) * sizeof(**l->cycles));
	memcpy(l->cycles[l->n], path, len * sizeof(*path));
	l->len[l->n++] = len;
}

/*
 * The next node on the path from u within component c: `start` when an
 * edge leads back to it (and the path has more than one node), else the
 * first not yet walked member of c from *cursor on, else UNSEEN.
 */
static size_t next_on_path(struct tarjan *t, size_t u, size_t *cursor,
			   size_t start, size_t len, size_t c)
{
	const struct cycle_graph *g = t->g;
	size_t k;

	if (len > 1)
		for (k = g->first[u]; k < g->first[u + 1]; k++)
			if (g->to[k] == start)
				return start;
	for (; *cursor < g->first[u + 1]; (*cursor)++) {
		size_t v = g->to[*cursor];

		if (t->comp[v] == c && t->walked[v] != c) {
			(*cursor)++;
			return v;
		}
	}
	return UNSEEN;
}

/*
 * Name one cycle of the component c whose first member is start: walk
 * from start, preferring an edge that closes the cycle, else the first
 * edge to a member not walked yet, backing up from a dead end.  Every
 * member reaches start, so the walk closes; it visits each member once.
 */
static void name_cycle(struct tarjan *t, size_t start, size_t c,
		       struct cycle_list *out)
{
	size_t len = 1, v;

	t->path[0] = start;
	t->cursor[0] = t->g->first[start];
	t->walked[start] = c;
	while (len) {
		size_t u = t->path[len - 1];

		v = next_on_path(t, u, &t->cursor[len - 1], start, len, c);
		if (v == start)
			break;
		if (v == UNSEEN) {
			if (len == 1)
				break;  /* a lone node: its edge is to itself */
			len--;
			continue;
		}
		t->walked[v] = c;
		t->path[len] = v;
		t->cursor[len++] = t->g->first[v];
	}
	add_cycle(out, t->path, len);
}

/* u is the root of a component: pop it, and name a cycle if it has one. */
static void close_component(struct tarjan *t, size_t u,
			    struct cycle_list *out)
{
	const struct cycle_graph *g = t->g;
	size_t first = t->sp, v, k, c = ++t->ncomp;
	int self_loop = 0;

	do {
		v = t->stack[--first];
		t->on_stack[v] = 0;
		t->comp[v] = c;
	} while (v != u);
	for (k = g->first[u]; k < g->first[u + 1]; k++)
		self_loop |= g->to[k] == u;
	if (t->sp - first > 1 || self_loop)
		name_cycle(t, t->stack[first], c, out);
	t->sp = first;
}

static void enter(struct tarjan *t, size_t v, size_t *wp)
{
	t->index[v] = t->low[v] = t->counter++;
	t->stack[t->sp++] = v;
	t->on_stack[v] = 1;
	t->work[*wp] = v;
	t->edge[(*wp)++] = t->g->first[v];
}

static void search_from(struct tarjan *t, size_t root, struct cycle_list *out)
{
	const struct cycle_graph *g = t->g;
	size_t wp = 0;

	enter(t, root, &wp);
	while (wp) {
		size_t u = t->work[wp - 1], v;

		if (t->edge[wp - 1] < g->first[u + 1]) {
			v = g->to[t->edge[wp - 1]++];
			if (v >= g->n)
				CS_BUG("edge to node %zu of %zu", v, g->n);
			if (t->index[v] == UNSEEN)
				enter(t, v, &wp);
			else if (t->on_stack[v] && t->index[v] < t->low[u])
				t->low[u] = t->index[v];
			continue;
		}
		wp--;
		if (wp && t->low[u] < t->low[t->work[wp - 1]])
			t->low[t->work[wp - 1]] = t->low[u];
		if (t->low[u] == t->index[u])
			close_component(t, u, out);
	}
}

void cycles_find(const struct cycle_graph *g, struct cycle_list *out)
{
	struct tarjan t;
	size_t i, n = g->n;

	/* No edge, no cycle: most programs' tasks await none of each
	 * other (and the arrays below were 1 % of a 10k-task dump). */
	if (!g->n || !g->first[g->n])
		return;
	memset(&t, 0, sizeof(t));
	t.g = g;
	t.index = xmalloc(n * sizeof(*t.index));
	t.low = xmalloc(n * sizeof(*t.low));
	t.on_stack = xcalloc(n, sizeof(*t.on_stack));
	t.stack = xmalloc(n * sizeof(*t.stack));
	t.work = xmalloc(n * sizeof(*t.work));
	t.edge = xmalloc(n * sizeof(*t.edge));
	t.comp = xcalloc(n, sizeof(*t.comp));
	t.walked = xcalloc(n, sizeof(*t.walked));
	t.path = xmalloc(n * sizeof(*t.path));
	t.cursor = xmalloc(n * sizeof(*t.cursor));
	for (i = 0; i < g->n; i++)
		t.index[i] = UNSEEN;
	/* A node without edges is a component of its own and no cycle; not
	 * a root, it changes no other node's search (only their indexes,
	 * all by the same amount). */
	for (i = 0; i < g->n; i++)
		if (t.index[i] == UNSEEN && g->first[i] < g->first[i + 1])
			search_from(&t, i, out);
	free(t.index);
	free(t.low);
	free(t.on_stack);
	free(t.stack);
	free(t.work);
	free(t.edge);
	free(t.comp);
	free(t.walked);
	free(t.path);
	free(t.cursor);
}
